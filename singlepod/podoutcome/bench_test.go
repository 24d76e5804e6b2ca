package podoutcome_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

// BenchmarkDecide is one sync of a running single-pod job with a sidecar.
func BenchmarkDecide(b *testing.B) {
	pod := newPod(corev1.PodRunning, inits("setup", "sidecar"), containers("test", "upload"),
		initStatuses(terminated("setup", 0, "Completed", finished), running("sidecar")),
		statuses(running("test"), running("upload")))
	pod.Status.StartTime = &finished
	opts := podoutcome.Options{MaxRevivals: 3, Timeouts: plaindl.DefaultTimeouts()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := podoutcome.Decide(pod, podoutcome.Revivals{}, opts, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassifySucceeded verifies a succeeded pod with 4 containers and 2
// init containers.
func BenchmarkClassifySucceeded(b *testing.B) {
	pod := newPod(corev1.PodSucceeded, inits("setup", "sidecar"), containers("a", "b", "c", "d"),
		initStatuses(terminated("setup", 0, "Completed", finished), running("sidecar")),
		statuses(terminated("a", 0, "", finished), terminated("b", 0, "", finished),
			terminated("c", 0, "", finished), terminated("d", 0, "", finished)))
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := podoutcome.Classify(pod); r.Outcome != podoutcome.OutcomeSucceeded {
			b.Fatal(r)
		}
	}
}
