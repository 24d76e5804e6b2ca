package explain_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
)

func TestSteps(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := []struct {
		name         string
		job          func() *batchv1.Job
		pods         func(job *batchv1.Job) []*corev1.Pod
		opts         explain.Options
		so           explain.StepOptions
		wantSteps    int
		wantLast     string // status after the last step
		wantFinished string
	}{
		{
			name:         "runs to completion and stops",
			job:          func() *batchv1.Job { return newJob(2, 2, false) },
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			so:           explain.StepOptions{Steps: 20},
			wantSteps:    3,
			wantLast:     "active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			name:      "an idle kubelet keeps the pods pending",
			job:       func() *batchv1.Job { return newJob(2, 2, false) },
			pods:      func(*batchv1.Job) []*corev1.Pod { return nil },
			so:        explain.StepOptions{Steps: 3, Kubelet: explain.KubeletIdle},
			wantSteps: 3,
			wantLast:  "active=2 ready=0 terminating=0 succeeded=0 failed=0",
		},
		{
			name: "failing pods exhaust the backoff limit",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Spec.BackoffLimit = ptr.To[int32](0)
				return job
			},
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			so:           explain.StepOptions{Steps: 10, Kubelet: explain.KubeletFail, ExitCode: 3},
			wantSteps:    3,
			wantLast:     "active=0 ready=0 terminating=0 succeeded=0 failed=1 conditions=FailureTarget,Failed",
			wantFinished: "Failed (BackoffLimitExceeded)",
		},
		{
			name: "a pod already in uncountedTerminatedPods is counted once",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"pod-0"}}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodSucceeded)}
			},
			so:           explain.StepOptions{Steps: 5, Kubelet: explain.KubeletIdle},
			wantSteps:    1,
			wantLast:     "active=0 ready=0 terminating=0 succeeded=1 failed=0 conditions=SuccessCriteriaMet,Complete",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			name: "assumed outcomes apply first",
			job:  func() *batchv1.Job { return newJob(1, 1, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				job.Status.Active = 1
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)}
			},
			opts:         explain.Options{Assume: []explain.Assumption{{Selector: "all", Outcome: explain.OutcomeSucceed}}},
			so:           explain.StepOptions{Steps: 5, Kubelet: explain.KubeletIdle},
			wantSteps:    1,
			wantLast:     "active=0 ready=0 terminating=0 succeeded=1 failed=0 conditions=SuccessCriteriaMet,Complete",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			name: "a terminating pod keeps its deletion",
			job:  func() *batchv1.Job { return newJob(1, 1, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				job.Status.Active = 1
				p := newPod(job, 0, corev1.PodRunning)
				p.DeletionTimestamp = &metav1.Time{Time: now}
				return []*corev1.Pod{p}
			},
			so:        explain.StepOptions{Steps: 1, Kubelet: explain.KubeletIdle},
			wantSteps: 1,
			// The terminating pod counts as failed: its replacement waits for the
			// pod failure backoff.
			wantLast: "active=0 ready=0 terminating=1 succeeded=0 failed=1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			opts := tt.opts
			opts.Now = now
			steps, err := explain.Steps(context.Background(), job, tt.pods(job), opts, tt.so)
			require.NoError(t, err)
			require.Len(t, steps, tt.wantSteps, "steps: %+v", steps)
			last := steps[len(steps)-1]
			if diff := cmp.Diff(tt.wantLast, last.Status); diff != "" {
				t.Errorf("last status (-want +got):\n%s\nsteps: %+v", diff, steps)
			}
			require.Equal(t, tt.wantFinished, last.Finished)
			require.Equal(t, now, steps[0].Time)
		})
	}
}

func TestStepsErrors(t *testing.T) {
	tests := []struct {
		name    string
		job     *batchv1.Job
		so      explain.StepOptions
		wantErr string
	}{
		{name: "nil job", so: explain.StepOptions{Steps: 1}, wantErr: "no job: job is nil"},
		{name: "no steps", job: newJob(1, 1, false), wantErr: "steps: must be positive, got 0"},
		{name: "unknown kubelet", job: newJob(1, 1, false), so: explain.StepOptions{Steps: 1, Kubelet: "nap"}, wantErr: `kubelet: unknown behaviour "nap" (want succeed, fail or idle)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := explain.Steps(context.Background(), tt.job, nil, explain.Options{Now: t0}, tt.so)
			require.EqualError(t, err, tt.wantErr)
		})
	}
}
