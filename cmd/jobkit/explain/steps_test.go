package explain_test

import (
	"context"
	"slices"
	"strings"
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
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
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
			steps, err := explain.Steps(context.Background(), plan.JobWorkload(job), tt.pods(job), opts, tt.so)
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
		owner   owner.Kind
		so      explain.StepOptions
		wantErr string
	}{
		{name: "nil job", so: explain.StepOptions{Steps: 1}, wantErr: "no job: workload is nil"},
		{name: "no steps", job: newJob(1, 1, false), wantErr: "steps: must be positive, got 0"},
		{name: "unknown kubelet", job: newJob(1, 1, false), so: explain.StepOptions{Steps: 1, Kubelet: "nap"}, wantErr: `kubelet: unknown behaviour "nap" (want succeed, fail or idle)`},
		{name: "invalid owner kind", job: newJob(1, 1, false), owner: owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob"}, so: explain.StepOptions{Steps: 1},
			wantErr: `Options.Owner: invalid owner kind: Finalizer "": required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := explain.Steps(context.Background(), workloadOf(tt.job), nil, explain.Options{Now: t0, Owner: tt.owner}, tt.so)
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

// callCounts counts the calls of a run by operation, with the kind for a status
// write ("UpdateStatus TrainingJob").
func callCounts(steps []explain.Step) map[string]int {
	out := map[string]int{}
	for _, s := range steps {
		for _, c := range s.Calls {
			f := strings.Fields(c)
			op := f[0]
			if op == "UpdateStatus" {
				op += " " + f[1]
			}
			out[op]++
		}
	}
	return out
}

// An owner of another kind is stepped as a Task of that kind: its status writes
// name the kind, and it runs to its end as a Job would.
func TestStepsOwnerOfAnotherKind(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := []struct {
		name         string
		job          func() *batchv1.Job // the workload, as the Job it reads as
		deleting     bool
		pods         func(job *batchv1.Job) []*corev1.Pod
		so           explain.StepOptions
		wantSteps    int
		wantCalls    map[string]int
		wantLast     string
		wantPods     string
		wantFinished string
	}{
		{
			name:         "runs to completion and stops",
			job:          func() *batchv1.Job { return newJob(2, 2, false) },
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			so:           explain.StepOptions{Steps: 20},
			wantSteps:    3,
			wantCalls:    map[string]int{"UpdateStatus TrainingJob": 4, "CreatePod": 2, "PatchPod": 2},
			wantLast:     "active=0 ready=0 terminating=0 succeeded=2 failed=0 conditions=SuccessCriteriaMet,Complete",
			wantPods:     "Succeeded=2",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			name: "an indexed owner with a running worker creates the missing indexes only",
			job: func() *batchv1.Job {
				job := newJob(3, 2, true)
				job.Status.Active = 1
				return job
			},
			pods:         func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{trainingPod(job, 0, corev1.PodRunning)} },
			so:           explain.StepOptions{Steps: 20},
			wantSteps:    4,
			wantCalls:    map[string]int{"UpdateStatus TrainingJob": 5, "CreatePod": 2, "PatchPod": 3},
			wantLast:     `active=0 ready=0 terminating=0 succeeded=3 failed=0 completedIndexes="0-2" conditions=SuccessCriteriaMet,Complete`,
			wantPods:     "Succeeded=3",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			name: "failing workers exhaust the per-index backoff limit",
			job: func() *batchv1.Job {
				job := newJob(2, 2, true)
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				return job
			},
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			so:           explain.StepOptions{Steps: 20, Kubelet: explain.KubeletFail, ExitCode: 3},
			wantSteps:    5,
			wantCalls:    map[string]int{"UpdateStatus TrainingJob": 7, "CreatePod": 4, "PatchPod": 4},
			wantLast:     `active=0 ready=0 terminating=0 succeeded=0 failed=4 failedIndexes="0,1" conditions=FailureTarget,Failed`,
			wantPods:     "Failed=4",
			wantFinished: "Failed (FailedIndexes)",
		},
		{
			name: "a pod already in uncountedTerminatedPods is counted once",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"pod-0"}}
				return job
			},
			pods:         func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{trainingPod(job, 0, corev1.PodSucceeded)} },
			so:           explain.StepOptions{Steps: 5, Kubelet: explain.KubeletIdle},
			wantSteps:    1,
			wantCalls:    map[string]int{"UpdateStatus TrainingJob": 2, "PatchPod": 1},
			wantLast:     "active=0 ready=0 terminating=0 succeeded=1 failed=0 conditions=SuccessCriteriaMet,Complete",
			wantPods:     "Succeeded=1",
			wantFinished: "Complete (CompletionsReached)",
		},
		{
			// Being deleted: the finished pod is counted, every finalizer goes, and
			// no pod is created for the missing completion.
			name: "an owner being deleted creates nothing",
			job: func() *batchv1.Job {
				job := newJob(2, 2, false)
				job.Status.Active = 1
				return job
			},
			deleting: true,
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{trainingPod(job, 0, corev1.PodSucceeded), trainingPod(job, 1, corev1.PodRunning)}
			},
			so:        explain.StepOptions{Steps: 3},
			wantSteps: 3,
			wantCalls: map[string]int{"UpdateStatus TrainingJob": 3, "PatchPod": 2},
			wantLast:  "active=0 ready=0 terminating=0 succeeded=1 failed=0",
			wantPods:  "Succeeded=2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			pods := tt.pods(job)
			w := *plan.JobWorkload(job)
			w.Deleting = tt.deleting
			before := w.Status.DeepCopy()
			steps, err := explain.Steps(context.Background(), &w, pods, explain.Options{Now: now, Owner: trainingKind}, tt.so)
			require.NoError(t, err)
			require.Len(t, steps, tt.wantSteps, "steps: %+v", steps)
			if diff := cmp.Diff(tt.wantCalls, callCounts(steps)); diff != "" {
				t.Errorf("calls by operation (-want +got):\n%s\nsteps: %+v", diff, steps)
			}
			last := steps[len(steps)-1]
			require.Equal(t, tt.wantLast, last.Status)
			require.Equal(t, tt.wantPods, last.Pods)
			require.Equal(t, tt.wantFinished, last.Finished)
			require.Equal(t, now, steps[0].Time)
			require.Equal(t, before, &w.Status, "the workload's status was modified")
		})
	}
}

// The same spec, status and pods make the same calls and statuses whether the
// owner is a batch/v1 Job or of another kind: Steps of the Job, Steps of
// its Workload without the Job object with the pods of the kind, and Steps of the Job read as the kind.
func TestStepsSameCallsForAJobAndAnotherKind(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := []struct {
		name string
		job  func() *batchv1.Job
		pods func(job *batchv1.Job) []*corev1.Pod
		opts explain.Options
		so   explain.StepOptions
	}{
		{
			name: "failed pods wait for the backoff, then the owner completes",
			job: func() *batchv1.Job {
				job := newJob(3, 2, false)
				job.Status.Failed = 2
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				a, b := newPod(job, 0, corev1.PodFailed), newPod(job, 1, corev1.PodFailed)
				a.Finalizers, b.Finalizers = nil, nil
				b.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
					Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: now.Add(-5 * time.Second)}}}}}
				return []*corev1.Pod{a, b}
			},
			so: explain.StepOptions{Steps: 10},
		},
		{
			name: "indexed, failing pods with a per-index limit",
			job: func() *batchv1.Job {
				job := newJob(3, 3, true)
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				job.Status.Active = 2
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning), newPod(job, 2, corev1.PodSucceeded)}
			},
			so: explain.StepOptions{Steps: 10, Kubelet: explain.KubeletFail, ExitCode: 7, StepDuration: 20 * time.Second},
		},
		{
			name: "assumed outcomes, an uncounted pod and an idle kubelet",
			job: func() *batchv1.Job {
				job := newJob(3, 3, false)
				job.Status.Active = 2
				job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"pod-2"}}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning), newPod(job, 1, corev1.PodRunning), newPod(job, 2, corev1.PodFailed)}
			},
			opts: explain.Options{Assume: []explain.Assumption{{Selector: "oldest", N: 1, Outcome: explain.OutcomeSucceed}}},
			so:   explain.StepOptions{Steps: 4, Kubelet: explain.KubeletIdle},
		},
	}
	// asJob writes a status call of the other kind as the Job's.
	asJob := func(steps []explain.Step) []explain.Step {
		out := slices.Clone(steps)
		for i := range out {
			out[i].Calls = slices.Clone(out[i].Calls)
			for k, c := range out[i].Calls {
				out[i].Calls[k] = strings.Replace(c, "UpdateStatus TrainingJob ", "UpdateJobStatus ", 1)
			}
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Now = now
			job := tt.job()
			want, err := explain.Steps(context.Background(), plan.JobWorkload(job), tt.pods(job), opts, tt.so)
			require.NoError(t, err)
			require.NotEmpty(t, want)

			var pods []*corev1.Pod
			for _, p := range tt.pods(job) {
				p.OwnerReferences = []metav1.OwnerReference{trainingKind.NewControllerRef(job)}
				if len(p.Finalizers) > 0 {
					p.Finalizers = []string{trainingKind.Finalizer}
				}
				pods = append(pods, p)
			}
			opts.Owner = trainingKind
			w := plan.JobWorkload(job)
			w.Object = nil
			got, err := explain.Steps(context.Background(), w, pods, opts, tt.so)
			require.NoError(t, err)
			if diff := cmp.Diff(want, asJob(got)); diff != "" {
				t.Errorf("Steps of a Workload as a TrainingJob differs from Steps of the Job (-job +trainingjob):\n%s", diff)
			}
			got, err = explain.Steps(context.Background(), plan.JobWorkload(job), pods, opts, tt.so)
			require.NoError(t, err)
			if diff := cmp.Diff(want, asJob(got)); diff != "" {
				t.Errorf("Steps of the Job read as a TrainingJob differs from Steps of the Job (-job +trainingjob):\n%s", diff)
			}
		})
	}
}
