package explain_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/plan"
)

func classesOf(r *explain.Report) map[string][]explain.Class {
	out := map[string][]explain.Class{}
	for _, p := range r.Pods {
		out[p.Name] = p.Classes
	}
	return out
}

func kinds(ds []explain.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Kind)
	}
	return out
}

func TestExplainClasses(t *testing.T) {
	tests := []struct {
		name string
		job  func() *batchv1.Job
		pods func(job *batchv1.Job) []*corev1.Pod
		want map[string][]explain.Class
	}{
		{
			name: "phases and readiness",
			job:  func() *batchv1.Job { return newJob(4, 4, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				ready := newPod(job, 0, corev1.PodRunning)
				ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				deleting := newPod(job, 1, corev1.PodRunning)
				deleting.DeletionTimestamp = &metav1.Time{Time: t0}
				counted := newPod(job, 3, corev1.PodFailed)
				counted.Finalizers = nil
				return []*corev1.Pod{ready, deleting, newPod(job, 2, corev1.PodSucceeded), counted}
			},
			want: map[string][]explain.Class{
				"job-0": {explain.ClassActive, explain.ClassReady},
				"job-1": {explain.ClassTerminating, explain.ClassUncounted},
				"job-2": {explain.ClassSucceeded, explain.ClassUncounted},
				"job-3": {explain.ClassFailed},
			},
		},
		{
			name: "terminating pods are not uncounted with podReplacementPolicy Failed",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodRunning)
				p.DeletionTimestamp = &metav1.Time{Time: t0}
				return []*corev1.Pod{p}
			},
			want: map[string][]explain.Class{"job-0": {explain.ClassTerminating}},
		},
		{
			name: "orphans, released, other owners and namespaces",
			job:  func() *batchv1.Job { return newJob(3, 3, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				orphan := newPod(job, 0, corev1.PodRunning)
				orphan.OwnerReferences = nil
				unmatched := newPod(job, 1, corev1.PodRunning)
				unmatched.OwnerReferences, unmatched.Labels = nil, nil
				released := newPod(job, 2, corev1.PodRunning)
				released.Labels = nil
				foreign := newPod(job, 3, corev1.PodRunning)
				foreign.OwnerReferences[0].UID = "other"
				elsewhere := newPod(job, 4, corev1.PodRunning)
				elsewhere.Namespace = "other"
				return []*corev1.Pod{orphan, unmatched, released, foreign, elsewhere}
			},
			want: map[string][]explain.Class{
				"job-0": {explain.ClassOrphan, explain.ClassActive},
				"job-1": {explain.ClassIgnored},
				"job-2": {explain.ClassReleased},
				"job-3": {explain.ClassIgnored},
				"job-4": {explain.ClassIgnored},
			},
		},
		{
			// Its counters are final: calling its pods uncounted would contradict
			// the unchanged status.
			name: "the finished pods of a finished Job keep only a finalizer",
			job: func() *batchv1.Job {
				job := newJob(2, 2, false)
				job.Status.Succeeded = 2
				job.Status.CompletionTime = &metav1.Time{Time: t0}
				job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				counted := newPod(job, 0, corev1.PodSucceeded)
				counted.Finalizers = nil
				return []*corev1.Pod{counted, newPod(job, 1, corev1.PodSucceeded)}
			},
			want: map[string][]explain.Class{
				"job-0": {explain.ClassSucceeded},
				"job-1": {explain.ClassSucceeded, explain.ClassFinalizerLeft},
			},
		},
		{
			name: "an orphan of a finished Job is not adopted",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Status.Succeeded = 1
				job.Status.CompletionTime = &metav1.Time{Time: t0}
				job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				orphan := newPod(job, 0, corev1.PodRunning)
				orphan.OwnerReferences = nil
				return []*corev1.Pod{orphan}
			},
			want: map[string][]explain.Class{"job-0": {explain.ClassOrphan}},
		},
		{
			name: "duplicates and strays of an Indexed Job",
			job:  func() *batchv1.Job { return newJob(2, 2, true) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				dup := newPod(job, 1, corev1.PodRunning)
				dup.Name, dup.UID = "job-1-dup", "dup"
				dup.CreationTimestamp = metav1.Time{Time: t0.Add(time.Hour)}
				noIndex := newPod(job, 5, corev1.PodRunning)
				noIndex.Annotations = nil
				return []*corev1.Pod{newPod(job, 1, corev1.PodRunning), dup, newPod(job, 3, corev1.PodRunning), noIndex}
			},
			want: map[string][]explain.Class{
				"job-1":     {explain.ClassActive},
				"job-1-dup": {explain.ClassActive, explain.ClassDuplicateIndex},
				"job-3":     {explain.ClassActive, explain.ClassStray},
				"job-5":     {explain.ClassActive, explain.ClassStray},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			r, err := explain.Explain(plan.JobWorkload(job), tt.pods(job), explain.Options{Now: t0.Add(time.Minute)})
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, classesOf(r)); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainDecisionsAndBlockers(t *testing.T) {
	now := t0.Add(time.Minute)
	tests := []struct {
		name          string
		job           func() *batchv1.Job
		pods          func(job *batchv1.Job) []*corev1.Pod
		opts          explain.Options
		wantActions   []string
		wantBlockers  []string
		wantRequeue   string
		wantIndexWait []explain.IndexWait
	}{
		{
			name:        "creates what is missing",
			job:         func() *batchv1.Job { return newJob(3, 2, false) },
			pods:        func(*batchv1.Job) []*corev1.Pod { return nil },
			wantActions: []string{"create", "create"},
		},
		{
			name: "parallelism reached",
			job:  func() *batchv1.Job { return newJob(3, 1, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)}
			},
			wantBlockers: []string{"all 1 wanted pod(s) are active (parallelism 1): waiting for them to finish"},
		},
		{
			name: "active deadline",
			job: func() *batchv1.Job {
				job := newJob(3, 1, false)
				job.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)}
			},
			wantBlockers: []string{"all 1 wanted pod(s) are active (parallelism 1): waiting for them to finish"},
			wantRequeue:  "9m0s",
		},
		{
			name:         "another controller",
			job:          func() *batchv1.Job { return newJob(1, 1, false) },
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			opts:         explain.Options{Controller: "example.com/mine"},
			wantBlockers: []string{`the Job is managed by another controller: spec.managedBy is "kubernetes.io/job-controller", not "example.com/mine" (explain as that controller with --managed-by=kubernetes.io/job-controller)`},
		},
		{
			name: "its own managedBy by default",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Spec.ManagedBy = ptr.To("example.com/mine")
				return job
			},
			pods:        func(*batchv1.Job) []*corev1.Pod { return nil },
			wantActions: []string{"create"},
		},
		{
			name: "job-wide backoff",
			job:  func() *batchv1.Job { return newJob(2, 1, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodFailed)
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: now.Add(-3 * time.Second)}}}}}
				return []*corev1.Pod{p}
			},
			wantActions:  []string{"record", "remove-finalizer"},
			wantBlockers: []string{"waiting for the pod failure backoff after 1 consecutive failure(s): 7s left"},
			wantRequeue:  "7s",
		},
		{
			name: "per-index backoff of two indexes, earliest first",
			job: func() *batchv1.Job {
				job := newJob(3, 3, true)
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](3)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				var pods []*corev1.Pod
				for i, ago := range map[int]time.Duration{0: 2 * time.Second, 2: 6 * time.Second} {
					p := newPod(job, i, corev1.PodFailed)
					p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: now.Add(-ago)}}}}}
					pods = append(pods, p)
				}
				slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
				return append(pods, newPod(job, 1, corev1.PodRunning))
			},
			wantBlockers:  []string{"waiting for per-index backoff of index 2: 4s left", "waiting for per-index backoff of index 0: 8s left"},
			wantRequeue:   "4s",
			wantIndexWait: []explain.IndexWait{{Index: 2, Failures: 1, Remaining: explain.Duration(4 * time.Second)}, {Index: 0, Failures: 1, Remaining: explain.Duration(8 * time.Second)}},
		},
		{
			name: "suspended",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Spec.Suspend = ptr.To(true)
				job.Status.StartTime = nil
				job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended"}}
				return job
			},
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			wantBlockers: []string{"the Job is suspended (spec.suspend is true): no pod is created until it is resumed"},
		},
		{
			name:         "expectations not satisfied",
			job:          func() *batchv1.Job { return newJob(1, 1, false) },
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			opts:         explain.Options{ExpectationsUnsatisfied: true},
			wantBlockers: []string{"expectations: creations or deletions of this controller are not yet observed in its cache; it creates, deletes and finishes nothing until they are"},
		},
		{
			name: "being deleted",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.DeletionTimestamp = &metav1.Time{Time: t0}
				return job
			},
			pods:         func(*batchv1.Job) []*corev1.Pod { return nil },
			wantBlockers: []string{"the Job is being deleted: the controller only counts its finished pods and removes their finalizers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			opts := tt.opts
			opts.Now = now
			r, err := explain.Explain(plan.JobWorkload(job), tt.pods(job), opts)
			require.NoError(t, err)
			var actions []string
			for _, d := range r.Decisions {
				actions = append(actions, d.Action)
			}
			if diff := cmp.Diff(tt.wantActions, actions); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantBlockers, r.Blockers); diff != "" {
				t.Errorf("blockers (-want +got):\n%s", diff)
			}
			gotRequeue := ""
			if r.Requeue != nil {
				gotRequeue = r.Requeue.After.String()
			}
			if gotRequeue != tt.wantRequeue {
				t.Errorf("requeue = %q, want %q", gotRequeue, tt.wantRequeue)
			}
			if diff := cmp.Diff(tt.wantIndexWait, r.IndexBackoff); diff != "" {
				t.Errorf("index backoff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExplainDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		job  func() *batchv1.Job
		pods func(job *batchv1.Job) []*corev1.Pod
		want []string
	}{
		{
			name: "healthy",
			job:  func() *batchv1.Job { return newJob(1, 1, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				job.Status.Active = 1
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)}
			},
		},
		{
			name: "finalizer after finish",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.Status.Succeeded = 1
				job.Status.CompletionTime = &metav1.Time{Time: t0}
				job.Status.Conditions = []batchv1.JobCondition{
					{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
					{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
				}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{newPod(job, 0, corev1.PodSucceeded)} },
			want: []string{explain.DiagFinalizerAfterFinish},
		},
		{
			name: "finalizer of a deleted Job of the same name",
			job:  func() *batchv1.Job { return newJob(1, 0, false) },
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodFailed)
				p.OwnerReferences[0].UID = "earlier"
				return []*corev1.Pod{p}
			},
			want: []string{explain.DiagFinalizerJobDeleted},
		},
		{
			name: "finalizer while the Job is being deleted",
			job: func() *batchv1.Job {
				job := newJob(1, 1, false)
				job.DeletionTimestamp = &metav1.Time{Time: t0}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{newPod(job, 0, corev1.PodFailed)} },
			want: []string{explain.DiagFinalizerJobDeleted},
		},
		{
			name: "invalid status and counters",
			job: func() *batchv1.Job {
				job := newJob(2, 2, false)
				job.Status.Active = 0
				job.Status.Ready = ptr.To[int32](1)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodSucceeded)
				p.Finalizers = nil
				return []*corev1.Pod{p, newPod(job, 1, corev1.PodRunning)}
			},
			// ready > active; active 0 for 1 active pod; ready 1 for 0 ready pods;
			// succeeded 0 for a pod already counted.
			want: []string{explain.DiagInvalidStatus, explain.DiagCounterMismatch, explain.DiagCounterMismatch, explain.DiagCounterMismatch},
		},
		{
			name: "invalid policies",
			job: func() *batchv1.Job {
				job := newJob(2, 2, true)
				job.Status.Active = 2
				job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore}}}
				job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](5)}}}
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{newPod(job, 0, corev1.PodRunning), newPod(job, 1, corev1.PodRunning)}
			},
			want: []string{explain.DiagInvalidFailurePolicy, explain.DiagInvalidSuccessPolicy},
		},
		{
			name: "bad index and failure count annotations",
			job: func() *batchv1.Job {
				job := newJob(2, 1, true)
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
				job.Status.Active = 1
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodRunning)
				p.Annotations[batchv1.JobCompletionIndexAnnotation] = "zero"
				p.Annotations[batchv1.JobIndexFailureCountAnnotation] = "-2"
				return []*corev1.Pod{p}
			},
			want: []string{explain.DiagBadIndex, explain.DiagBadIndex},
		},
		{
			name: "a status that may outgrow the object limit",
			job: func() *batchv1.Job {
				job := newJob(1_000_000, 1, true)
				job.Status.Active = 1
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{newPod(job, 0, corev1.PodRunning)} },
			want: []string{explain.DiagObjectSize},
		},
		{
			name: "an object within 20% of the limit",
			job: func() *batchv1.Job {
				job := newJob(1_000_000, 1, true)
				job.Status.Active = 1
				var b strings.Builder
				for i := 1; b.Len() < plan.MaxObjectBytes*4/5; i += 2 {
					if b.Len() > 0 {
						b.WriteByte(',')
					}
					b.WriteString(strconv.Itoa(i))
				}
				job.Status.CompletedIndexes = b.String()
				job.Status.Succeeded = int32(strings.Count(b.String(), ",") + 1)
				return job
			},
			pods: func(job *batchv1.Job) []*corev1.Pod {
				p := newPod(job, 0, corev1.PodRunning)
				return []*corev1.Pod{p}
			},
			want: []string{explain.DiagObjectSize, explain.DiagObjectSize},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job()
			pods := tt.pods(job)
			r, err := explain.Explain(plan.JobWorkload(job), pods, explain.Options{Now: t0.Add(time.Minute)})
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, kinds(r.Diagnostics)); diff != "" {
				t.Errorf("diagnostic kinds (-want +got):\n%s\nall: %+v", diff, r.Diagnostics)
			}
		})
	}
}

func TestExplainDoesNotModifyInput(t *testing.T) {
	job := newJob(3, 3, true)
	pods := []*corev1.Pod{newPod(job, 0, corev1.PodSucceeded), newPod(job, 1, corev1.PodRunning), newPod(job, 2, corev1.PodRunning)}
	pods[2].OwnerReferences = nil // an orphan the plan adopts
	jobCopy := job.DeepCopy()
	podsCopy := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		podsCopy[i] = p.DeepCopy()
	}
	a, err := explain.ParseAssumption("index=1:fail:exit=42")
	require.NoError(t, err)
	_, err = explain.Explain(plan.JobWorkload(job), pods, explain.Options{Now: t0, Assume: []explain.Assumption{a}})
	require.NoError(t, err)
	if diff := cmp.Diff(jobCopy, job); diff != "" {
		t.Errorf("job modified (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(podsCopy, pods); diff != "" {
		t.Errorf("pods modified (-before +after):\n%s", diff)
	}
}

func TestExplainErrors(t *testing.T) {
	tests := []struct {
		name    string
		job     *batchv1.Job
		opts    explain.Options
		wantErr string
		wantIs  error
	}{
		{name: "nil job", wantErr: "no job: workload is nil", wantIs: explain.ErrNoJob},
		{
			name: "unplannable job",
			job: func() *batchv1.Job {
				j := newJob(1, 1, false)
				j.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sometimes"))
				return j
			}(),
			wantErr: `planning job ns/job: invalid job: spec.completionMode: unknown value "Sometimes"`,
		},
		{
			name:    "assumption matching nothing",
			job:     newJob(1, 1, false),
			opts:    explain.Options{Assume: []explain.Assumption{{Selector: "all", Outcome: explain.OutcomeSucceed}}},
			wantErr: `bad --assume "all:succeed": no active pod of the Job matches`,
			wantIs:  explain.ErrBadAssumption,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := explain.Explain(workloadOf(tt.job), nil, tt.opts)
			require.EqualError(t, err, tt.wantErr)
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Explain error %v is not %v", err, tt.wantIs)
			}
		})
	}
}

func TestStatusChanges(t *testing.T) {
	job := newJob(2, 2, false)
	r, err := explain.Explain(plan.JobWorkload(job), []*corev1.Pod{newPod(job, 0, corev1.PodSucceeded), newPod(job, 1, corev1.PodSucceeded)}, explain.Options{Now: t0.Add(time.Minute)})
	require.NoError(t, err)
	want := []explain.FieldChange{
		{Field: "status.completionTime", From: "", To: "2026-03-01T10:01:00Z"},
		{Field: "status.conditions[Complete].lastProbeTime", From: "", To: "2026-03-01T10:01:00Z"},
		{Field: "status.conditions[Complete].lastTransitionTime", From: "", To: "2026-03-01T10:01:00Z"},
		{Field: "status.conditions[Complete].message", From: "", To: "Reached expected number of succeeded pods"},
		{Field: "status.conditions[Complete].reason", From: "", To: "CompletionsReached"},
		{Field: "status.conditions[Complete].status", From: "", To: "True"},
		{Field: "status.conditions[SuccessCriteriaMet].lastProbeTime", From: "", To: "2026-03-01T10:01:00Z"},
		{Field: "status.conditions[SuccessCriteriaMet].lastTransitionTime", From: "", To: "2026-03-01T10:01:00Z"},
		{Field: "status.conditions[SuccessCriteriaMet].message", From: "", To: "Reached expected number of succeeded pods"},
		{Field: "status.conditions[SuccessCriteriaMet].reason", From: "", To: "CompletionsReached"},
		{Field: "status.conditions[SuccessCriteriaMet].status", From: "", To: "True"},
		{Field: "status.succeeded", From: "0", To: "2"},
	}
	if diff := cmp.Diff(want, r.StatusChanges); diff != "" {
		t.Errorf("StatusChanges (-want +got):\n%s", diff)
	}
}

func TestParseAssumption(t *testing.T) {
	tests := []struct {
		in      string
		want    explain.Assumption
		wantErr string
	}{
		{in: "index=3:fail:exit=42", want: explain.Assumption{Selector: "index", N: 3, Outcome: explain.OutcomeFail, Exit: 42}},
		{in: "oldest=2:succeed", want: explain.Assumption{Selector: "oldest", N: 2, Outcome: explain.OutcomeSucceed, Exit: 1}},
		{in: "newest=1:fail:condition=DisruptionTarget", want: explain.Assumption{Selector: "newest", N: 1, Outcome: explain.OutcomeFail, Exit: 1, Condition: "DisruptionTarget"}},
		{in: "pod=work-1:delete", want: explain.Assumption{Selector: "pod", Pod: "work-1", Outcome: explain.OutcomeDelete, Exit: 1}},
		{in: "all:ready", want: explain.Assumption{Selector: "all", Outcome: explain.OutcomeReady, Exit: 1}},
		{in: "index=3", wantErr: `bad --assume "index=3": want SELECTOR:OUTCOME[:KEY=VALUE]..., for example index=3:fail:exit=42`},
		{in: "oldest=0:succeed", wantErr: `bad --assume "oldest=0:succeed": selector oldest needs a number (oldest=N), got "0"`},
		{in: "index=-1:succeed", wantErr: `bad --assume "index=-1:succeed": selector index needs a number (index=N), got "-1"`},
		{in: "pod=:succeed", wantErr: `bad --assume "pod=:succeed": selector pod needs a name (pod=NAME)`},
		{in: "all=2:succeed", wantErr: `bad --assume "all=2:succeed": selector all takes no value`},
		{in: "first=1:succeed", wantErr: `bad --assume "first=1:succeed": unknown selector "first" (want index=N, pod=NAME, oldest=N, newest=N or all)`},
		{in: "all:explode", wantErr: `bad --assume "all:explode": unknown outcome "explode" (want succeed, fail, ready or delete)`},
		{in: "all:fail:exit=0", wantErr: `bad --assume "all:fail:exit=0": exit needs a non-zero exit code, got "0"`},
		{in: "all:succeed:exit=3", wantErr: `bad --assume "all:succeed:exit=3": unknown option "exit=3" for outcome succeed`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := explain.ParseAssumption(tt.in)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				require.ErrorIs(t, err, explain.ErrBadAssumption)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAssumption(%q) (-want +got):\n%s", tt.in, diff)
			}
			back, err := explain.ParseAssumption(got.String())
			require.NoError(t, err)
			require.Equal(t, got, back, "String() does not round-trip")
		})
	}
}

func TestAssumptionsApply(t *testing.T) {
	job := newJob(4, 4, true)
	pods := []*corev1.Pod{newPod(job, 0, corev1.PodRunning), newPod(job, 1, corev1.PodRunning), newPod(job, 2, corev1.PodRunning), newPod(job, 3, corev1.PodRunning)}
	tests := []struct {
		assume []string
		want   map[string][]explain.Class
	}{
		{assume: []string{"index=2:fail:exit=42"}, want: map[string][]explain.Class{
			"job-0": {explain.ClassActive}, "job-1": {explain.ClassActive},
			"job-2": {explain.ClassFailed, explain.ClassUncounted}, "job-3": {explain.ClassActive}}},
		{assume: []string{"oldest=2:succeed", "newest=1:ready"}, want: map[string][]explain.Class{
			"job-0": {explain.ClassSucceeded, explain.ClassUncounted}, "job-1": {explain.ClassSucceeded, explain.ClassUncounted},
			"job-2": {explain.ClassActive}, "job-3": {explain.ClassActive, explain.ClassReady}}},
		{assume: []string{"pod=job-1:delete"}, want: map[string][]explain.Class{
			"job-0": {explain.ClassActive}, "job-1": {explain.ClassTerminating, explain.ClassUncounted},
			"job-2": {explain.ClassActive}, "job-3": {explain.ClassActive}}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.assume, " "), func(t *testing.T) {
			opts := explain.Options{Now: t0.Add(time.Minute)}
			for _, s := range tt.assume {
				a, err := explain.ParseAssumption(s)
				require.NoError(t, err)
				opts.Assume = append(opts.Assume, a)
			}
			r, err := explain.Explain(plan.JobWorkload(job), pods, opts)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, classesOf(r)); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
			require.Equal(t, tt.assume, r.Assumed)
		})
	}
}

func TestReadObjects(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantJobs    int
		wantPods    int
		wantIgnored map[string]int
		wantErr     string
	}{
		{name: "empty", in: ""},
		{name: "one job", in: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\n", wantJobs: 1},
		{name: "documents and lists", in: `apiVersion: batch/v1
kind: Job
metadata: {name: a}
---
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: p1}}
- {apiVersion: v1, kind: PodList, items: [{apiVersion: v1, kind: Pod, metadata: {name: p2}}]}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}
`, wantJobs: 1, wantPods: 2, wantIgnored: map[string]int{"v1 ConfigMap": 1}},
		{name: "json", in: `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}`, wantPods: 1},
		{name: "a Job of another API version", in: "apiVersion: batch/v2\nkind: Job\nmetadata: {name: a}\n", wantIgnored: map[string]int{"batch/v2 Job": 1}},
		{name: "no kind", in: "metadata: {name: a}\n", wantErr: "in.yaml: document 1: not a Kubernetes object: no kind"},
		{name: "bad field", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: [1]}\n---\n", wantErr: "in.yaml: document 1: Pod: json: cannot unmarshal array into Go struct field ObjectMeta.metadata.name of type string"},
		{name: "bad item", in: "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod, apiVersion: v1, spec: 3}\n", wantErr: "in.yaml: document 1: items[0]: Pod: json: cannot unmarshal number into Go struct field Pod.spec of type v1.PodSpec"},
		// A YAML error names its line in the whole input: the parser's errors
		// (counted from 0 by the YAML library) and the scanner's alike.
		{name: "parser error in the second document", in: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n# the second\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  - x\n",
			wantErr: "in.yaml: line 10 (document 2): did not find expected key"},
		{name: "scanner error in the third document", in: "---\napiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n--- # third\nkind: Pod\nmetadata:\n  name: b\n   namespace: default\n",
			wantErr: "in.yaml: line 11 (document 3): mapping values are not allowed in this context"},
		{name: "parser error on the first line", in: "[a, b\n", wantErr: "in.yaml: line 2 (document 1): did not find expected ',' or ']'"},
		{name: "unparsable second document", in: "apiVersion: v1\nkind: Pod\n---\n: : :\n", wantErr: "in.yaml: line 4 (document 2): did not find expected key"},
		{name: "json error on its line", in: "{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\",\n \"metadata\": {name}}\n", wantErr: "in.yaml: line 3 (document 1): invalid character 'n' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs explain.Objects
			err := explain.ReadObjects("in.yaml", strings.NewReader(tt.in), &objs)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, objs.Jobs, tt.wantJobs)
			require.Len(t, objs.Pods, tt.wantPods)
			require.Equal(t, tt.wantIgnored, objs.Ignored)
		})
	}
}

func TestPick(t *testing.T) {
	job := func(ns, name string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	objs := explain.Objects{Jobs: []*batchv1.Job{job("a", "x"), job("b", "x"), job("a", "y")}}
	tests := []struct {
		namespace, name string
		want            string
		wantErr         string
	}{
		{namespace: "a", name: "x", want: "a/x"},
		{name: "y", want: "a/y"},
		{name: "x", wantErr: "the input holds 2 Jobs (a/x, b/x): name one"},
		{wantErr: "the input holds 3 Jobs (a/x, b/x, a/y): name one"},
		{namespace: "c", name: "x", wantErr: `no job: job "c/x" not found in the input (it holds a/x, b/x, a/y)`},
	}
	for _, tt := range tests {
		t.Run(tt.namespace+"/"+tt.name, func(t *testing.T) {
			got, err := objs.Pick(tt.namespace, tt.name)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got.Namespace+"/"+got.Name)
		})
	}
}

func BenchmarkExplain(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			job := newJob(int32(n), int32(n), true)
			pods := make([]*corev1.Pod, n)
			for i := range pods {
				phase := corev1.PodRunning
				if i%3 == 0 {
					phase = corev1.PodSucceeded
				}
				pods[i] = newPod(job, i, phase)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := explain.Explain(plan.JobWorkload(job), pods, explain.Options{Now: t0}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
