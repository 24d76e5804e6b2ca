package backoff_test

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/owner"
)

func TestLaterFailure(t *testing.T) {
	// failedAt is a failed pod with the index's failure counts, finished at d.
	failedAt := func(d time.Duration, failed, ignored string) *corev1.Pod {
		b := newPod("p").phase(corev1.PodFailed).terminated(at(d))
		if failed != "" {
			b = b.annotation(batchv1.JobIndexFailureCountAnnotation, failed)
		}
		if ignored != "" {
			b = b.annotation(batchv1.JobIndexIgnoredFailureCountAnnotation, ignored)
		}
		return b.obj()
	}
	tests := []struct {
		name string
		a, b *corev1.Pod
		want bool
	}{
		{"more failures, later", failedAt(20*time.Second, "2", ""), failedAt(10*time.Second, "1", ""), true},
		{"fewer failures, later", failedAt(20*time.Second, "0", ""), failedAt(10*time.Second, "1", ""), false},
		{"more failures, earlier", failedAt(5*time.Second, "2", ""), failedAt(10*time.Second, "1", ""), false},
		{"same counts and time: a is as late", failedAt(10*time.Second, "1", ""), failedAt(10*time.Second, "1", ""), true},
		{"ignored failures count", failedAt(20*time.Second, "0", "2"), failedAt(10*time.Second, "1", ""), true},
		{"unreadable count counts 0", failedAt(20*time.Second, "x", ""), failedAt(10*time.Second, "", ""), true},
		{"unreadable count against 1", failedAt(20*time.Second, "x", ""), failedAt(10*time.Second, "1", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := backoff.LaterFailure(owner.BatchJob, tt.a, tt.b); got != tt.want {
				t.Errorf("LaterFailure() = %v, want %v", got, tt.want)
			}
		})
	}
}
