package clientgo

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/plan"
)

// BenchmarkListPods measures the lister of a sync: the Job's n pods from the index,
// among n pods of 10 other Jobs and n/10 orphans in the namespace.
func BenchmarkListPods(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c, _ := newTestController(b)
			job := testJob("a", "uid-a", testName, false)
			match := map[string]string{"job": "a"}
			var others []*batchv1.Job
			for j := range 10 {
				others = append(others, testJob(fmt.Sprintf("o%d", j), types.UID(fmt.Sprintf("uid-o%d", j)), testName, false))
			}
			add := func(p *corev1.Pod) {
				if err := c.pods.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			for i := range n {
				add(testPod("ns", fmt.Sprintf("a-%d", i), match, job))
				other := others[i%len(others)]
				add(testPod("ns", fmt.Sprintf("%s-%d", other.Name, i), map[string]string{"job": other.Name}, other))
				if i%10 == 0 {
					add(testPod("ns", fmt.Sprintf("orphan-%d", i), map[string]string{"job": "x"}, nil))
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				pods, err := c.listPods(plan.JobWorkload(job))
				if err != nil || len(pods) != n {
					b.Fatalf("listPods() = %d pods, %v; want %d", len(pods), err, n)
				}
			}
		})
	}
}
