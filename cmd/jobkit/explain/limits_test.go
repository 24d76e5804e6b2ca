package explain_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/plan"
)

func TestExplainLimits(t *testing.T) {
	failedWith := func(job *batchv1.Job, i int, earlier string) *corev1.Pod {
		pod := newPod(job, i, corev1.PodFailed)
		pod.Finalizers = nil
		if earlier != "" {
			pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = earlier
		}
		return pod
	}
	tests := []struct {
		name string
		job  func() *batchv1.Job
		pods func(job *batchv1.Job) []*corev1.Pod
		want []string
	}{
		{
			name: "failures against the default backoffLimit",
			job: func() *batchv1.Job {
				job := newJob(3, 1, false)
				job.Status.Failed = 2
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)} },
			want: []string{
				"backoffLimit: 2 of 6 failure(s) used (unset: the API's default 6)",
				"pod failure backoff: 10s after the first failure, doubling, at most 10m0s",
			},
		},
		{
			name: "per index, failed indexes and the deadline",
			job: func() *batchv1.Job {
				job := newJob(3, 3, true)
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				job.Spec.MaxFailedIndexes = ptr.To[int32](2)
				job.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
				job.Status.Failed = 3
				job.Status.FailedIndexes = ptr.To("1")
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning), failedWith(job, 1, "1"), failedWith(job, 2, "")}
			},
			want: []string{
				"index 1: 2 failure(s), backoffLimitPerIndex 1: failed for good",
				"index 2: 1 failure(s), backoffLimitPerIndex 1: 0 more allowed",
				"maxFailedIndexes: 1 of 2 failed index(es)",
				"activeDeadlineSeconds 600: 9m0s left (started 2026-03-01T10:00:00Z)",
				"pod failure backoff: 10s after the first failure, doubling, at most 10m0s",
			},
		},
		{
			// The plan deletes the active pod, which the status counts as failed.
			name: "a deadline past",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Spec.BackoffLimit = ptr.To[int32](0)
				job.Spec.ActiveDeadlineSeconds = ptr.To[int64](30)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)} },
			want: []string{
				"backoffLimit: 1 failure(s) counted against the limit of 0, but the Job fails by DeadlineExceeded",
				"activeDeadlineSeconds 30: exceeded 30s ago (started 2026-03-01T10:00:00Z)",
				"pod failure backoff: 10s after the first failure, doubling, at most 10m0s",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			r, err := explain.Explain(plan.JobWorkload(job), tt.pods(job), explain.Options{Now: t0.Add(time.Minute)})
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, r.Limits); diff != "" {
				t.Errorf("Limits (-want +got):\n%s", diff)
			}
		})
	}
}
