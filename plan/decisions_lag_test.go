package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
)

// While expectations are unsatisfied, the cache is about to show the pods of the
// creations and deletions in flight: finished pods wait to be recorded in one batch
// with the ones on the way, and a status that changes only counts recomputed from the
// pods is not written, unless the Job is finishing or being deleted, or the ledger is
// full.
func TestDecisionLaggingCache(t *testing.T) {
	unsatisfied := func(in *Input) { in.ExpectationsSatisfied = false }
	succeeded := tbPhase(corev1.PodSucceeded)
	cases := []struct {
		name          string
		in            Input
		wantRecorded  int  // pods whose finalizer goes in this sync
		wantChanged   bool // StatusChanged
		wantRecordSet bool // RecordStatus set
	}{
		{
			name:         "satisfied: finished pods are recorded",
			in:           tbInput(tbJob(tbSize(4, 4)), append(tbPods("done", 2, succeeded), tbPods("run", 2)...)...),
			wantRecorded: 2, wantChanged: true, wantRecordSet: true,
		},
		{
			name: "unsatisfied: finished pods wait, and the active count is not written",
			in: tbWithInput(tbInput(tbJob(tbSize(4, 4), tbStatus(func(s *batchv1.JobStatus) { s.Active = 4; s.Ready = ptr.To[int32](0) })),
				append(tbPods("done", 2, succeeded), tbPods("run", 2)...)...), unsatisfied),
			wantRecorded: 0, wantChanged: false,
		},
		{
			name: "unsatisfied, a pod failed past the backoff limit: recorded, the Job fails",
			in: tbWithInput(tbInput(tbJob(tbSize(4, 4), tbBackoffLimit(0)),
				append(tbPods("failed", 1, tbFailedAgo(time.Second)), tbPods("run", 2)...)...), unsatisfied),
			wantRecorded: 3, wantChanged: true, wantRecordSet: true,
		},
		{
			name: "unsatisfied, Job being deleted: recorded",
			in: tbWithInput(tbInput(tbJob(tbSize(4, 4), tbJobDeleting),
				append(tbPods("done", 2, succeeded), tbPods("run", 2)...)...), unsatisfied),
			wantRecorded: 4, wantChanged: true, wantRecordSet: true,
		},
		{
			name: "unsatisfied, the ledger is full: recorded",
			in: tbWithInput(tbInput(tbJob(tbSize(4, 4)), append(tbPods("done", 2, succeeded), tbPods("run", 2)...)...),
				func(in *Input) { in.ExpectationsSatisfied = false; in.Options.MaxUncounted = 2 }),
			wantRecorded: 2, wantChanged: true, wantRecordSet: true,
		},
		{
			name: "unsatisfied: a change of more than the pod counts is written",
			in: tbWithInput(tbInput(tbJob(tbSize(4, 4), tbNotStarted), tbPods("run", 2)...),
				unsatisfied),
			wantRecorded: 0, wantChanged: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			removals := len(p.RemoveFinalizers)
			for _, d := range p.Delete {
				if d.RemoveFinalizerFirst {
					removals++
				}
			}
			assert.Equal(t, tc.wantRecorded, removals, "finalizer removals\nplan:\n%s", p)
			assert.Equal(t, tc.wantChanged, p.StatusChanged, "StatusChanged\nplan:\n%s", p)
			assert.Equal(t, tc.wantRecordSet, p.RecordStatus != nil, "RecordStatus set\nplan:\n%s", p)
		})
	}
}

func TestOnlyPodCountsDiffer(t *testing.T) {
	base := batchv1.JobStatus{Active: 2, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0), Succeeded: 1, CompletedIndexes: "0"}
	with := func(f func(*batchv1.JobStatus)) *batchv1.JobStatus {
		s := base.DeepCopy()
		f(s)
		return s
	}
	cases := []struct {
		name string
		a    *batchv1.JobStatus
		want bool
	}{
		{name: "equal", a: with(func(*batchv1.JobStatus) {}), want: true},
		{name: "active, ready, terminating", a: with(func(s *batchv1.JobStatus) { s.Active, s.Ready, s.Terminating = 5, ptr.To[int32](3), ptr.To[int32](1) }), want: true},
		{name: "succeeded indexes", a: with(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0,1", 2 }), want: true},
		{name: "succeeded alone (a NonIndexed counter)", a: with(func(s *batchv1.JobStatus) { s.Succeeded = 2 }), want: false},
		{name: "failed", a: with(func(s *batchv1.JobStatus) { s.Failed = 1 }), want: false},
		{name: "uncounted", a: with(func(s *batchv1.JobStatus) {
			s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"x"}}
		}), want: false},
		{name: "a condition", a: with(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}
		}), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, onlyPodCountsDiffer(tc.a, &base), "onlyPodCountsDiffer(%+v, %+v)", tc.a, base)
		})
	}
	assert.False(t, onlyPodCountsDiffer(nil, &base), "nil")
}

// With Input.Owner, created pods get that kind's controller reference and tracking
// finalizer, and only pods carrying that finalizer are tracked (recorded, then
// released); the batch/v1 Job's finalizer means nothing to such a controller.
func TestDecisionOwner(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	withKindFinalizer := func(p *corev1.Pod) { p.Finalizers = []string{kind.Finalizer} }
	in := tbInput(tbJob(tbSize(4, 3)),
		tbPod("done-ours", tbPhase(corev1.PodSucceeded), withKindFinalizer),
		tbPod("done-batch", tbPhase(corev1.PodSucceeded)), // carries batch.kubernetes.io/job-tracking only
		tbPod("run", withKindFinalizer))
	in.Owner = kind
	p := tbCompute(t, in)
	require.Len(t, p.RemoveFinalizers, 1, "plan:\n%s", p)
	assert.Equal(t, "done-ours", p.RemoveFinalizers[0].Pod.Name, "only the pod with the owner's finalizer is tracked")
	require.NotEmpty(t, p.Create, "plan:\n%s", p)
	pod := p.Create[0].Pod
	ref := kind.ControllerOf(pod)
	require.NotNil(t, ref, "created pod's owner references %v", pod.OwnerReferences)
	assert.Equal(t, in.Workload.UID, ref.UID)
	assert.Contains(t, pod.Finalizers, kind.Finalizer)
	assert.NotContains(t, pod.Finalizers, batchv1.JobTrackingFinalizer)

	in.Owner = owner.Kind{} // the zero value is the batch/v1 Job
	p = tbCompute(t, in)
	require.Len(t, p.RemoveFinalizers, 1, "plan:\n%s", p)
	assert.Equal(t, "done-batch", p.RemoveFinalizers[0].Pod.Name)
}
