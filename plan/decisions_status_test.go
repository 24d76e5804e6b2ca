package plan

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Tables for decisions 9 to 15 of issue 3: the status, managedBy, elastic Indexed
// Jobs, the requeue, API defaults, ownership and Jobs being deleted.

type tbD9Case struct {
	name        string
	in          Input
	wantRecord  *batchv1.JobStatus
	wantStatus  batchv1.JobStatus
	wantChanged bool
	wantRemove  []string
}

func (c tbD9Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD9Cases() []tbD9Case {
	resumed := tbCond(batchv1.JobSuspended, "JobResumed", "Job resumed")
	resumed.Status = corev1.ConditionFalse
	started := tbTime(tbAgo(time.Hour))
	steady := tbJob(tbSize(3, 2), tbWithCond(resumed), tbStatus(func(s *batchv1.JobStatus) {
		s.Active, s.Ready, s.Succeeded = 2, ptr.To[int32](1), 1
	}))
	finished := tbJob(tbWithCond(tbCond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, tbMsgCompletions)),
		tbWithCond(tbCond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached, tbMsgCompletions)),
		tbStatus(func(s *batchv1.JobStatus) { s.Succeeded, s.CompletionTime = 1, tbTime(tbAgo(time.Minute)) }))
	noPerIndexStatus := tbJob(tbSize(2, 2), tbPerIndex(1, -1), tbStatus(func(s *batchv1.JobStatus) { s.FailedIndexes = nil }))
	return []tbD9Case{
		{
			name:       "a steady Job writes nothing and keeps its condition times",
			in:         tbInput(steady, tbPod("a", tbReady), tbPod("b"), tbPod("s", tbSucceeded, tbNoFinalizer)),
			wantStatus: steady.Status,
		},
		{
			name: "the first sync fills an empty status",
			in:   tbInput(tbJob(tbStatus(func(s *batchv1.JobStatus) { *s = batchv1.JobStatus{} }))),
			wantStatus: batchv1.JobStatus{
				StartTime: tbTime(tbNow), Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
		},
		{
			name: "finished pods are recorded first and counted after their finalizers go",
			in: tbInput(tbJob(tbSize(4, 2), tbStatus(func(s *batchv1.JobStatus) { s.Active, s.Succeeded = 2, 1 })),
				tbPod("s", tbSucceeded), tbPod("f", tbFailed), tbPod("r1", tbReady), tbPod("r2")),
			wantRecord: &batchv1.JobStatus{
				StartTime: started, Active: 2, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0), Succeeded: 1,
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"s"}, Failed: []types.UID{"f"}},
			},
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 2, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0), Succeeded: 2, Failed: 1,
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
			wantRemove:  []string{"s", "f"},
		},
		{
			name: "nothing new to record: no RecordStatus, the uncounted pod is counted",
			in: tbInput(tbJob(tbSize(3, 1), tbStatus(func(s *batchv1.JobStatus) {
				s.Active = 1
				s.UncountedTerminatedPods.Failed = []types.UID{"f"}
			})), tbPod("f", tbFailed), tbPod("r")),
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), Failed: 1,
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
			wantRemove:  []string{"f"},
		},
		{
			name: "Indexed: completedIndexes in the form 1,3-5,7",
			in:   tbInput(tbJob(tbIndexed, tbSize(9, 9)), tbIndexedPods("p", []int{7, 1, 4, 3, 5}, tbSucceeded)...),
			wantRecord: &batchv1.JobStatus{
				StartTime: started, Active: 4, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), Succeeded: 5, CompletedIndexes: "1,3-5,7",
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 4, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), Succeeded: 5, CompletedIndexes: "1,3-5,7",
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
			wantRemove:  []string{"p-7", "p-1", "p-4", "p-3", "p-5"},
		},
		{
			name: "failedIndexes is the empty string from the first sync with backoffLimitPerIndex",
			in:   tbInput(noPerIndexStatus),
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 2, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), FailedIndexes: ptr.To(""),
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
		},
		{
			name: "failedIndexes stays unset without backoffLimitPerIndex",
			in:   tbInput(tbJob(tbIndexed, tbSize(2, 2), tbStatus(func(s *batchv1.JobStatus) { s.Active = 2 })), tbPod("p-0", tbIx(0)), tbPod("p-1", tbIx(1))),
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 2, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
		},
		{
			name: "ready and terminating",
			in: tbInput(tbJob(tbSize(3, 3), tbReplaceFailed), tbPod("a", tbReady), tbPod("b"), tbPod("t", tbDeleted),
				tbPod("t2", tbDeleted, tbReady)),
			wantStatus: batchv1.JobStatus{
				StartTime: started, Active: 2, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](2),
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			},
			wantChanged: true,
		},
		{
			name:       "a finished Job keeps its status; its pods lose their finalizers",
			in:         tbInput(finished, tbPod("s", tbSucceeded), nil, tbPod("x", tbSucceeded, tbNoFinalizer), tbPod("o", tbOwnedBy("rs-uid"))),
			wantStatus: finished.Status,
			wantRemove: []string{"s"},
		},
	}
}

func TestDecision9_Status(t *testing.T) {
	for _, tc := range tbD9Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			if diff := cmp.Diff(tc.wantRecord, p.RecordStatus, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compute(in).RecordStatus (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, p.Status, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compute(in).Status (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantChanged, p.StatusChanged, "Compute(in).StatusChanged")
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			if !tc.wantChanged && len(tc.wantRemove) == 0 {
				assert.True(t, p.IsEmpty(), "IsEmpty of a plan that changes nothing\nplan:\n%s", p)
			}
		})
	}
}

type tbD10Case struct {
	name     string
	in       Input
	wantSkip bool
	wantErr  bool
}

func (c tbD10Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD10Cases() []tbD10Case {
	as := func(name string, mods ...func(*batchv1.Job)) Input {
		in := tbInput(tbJob(append(mods, tbNotStarted)...))
		in.ControllerName = name
		return in
	}
	const mine, other = "example.com/mine", "example.com/other"
	return []tbD10Case{
		{name: "unset managedBy, the default controller", in: as(batchv1.JobControllerName)},
		{name: "unset managedBy, another controller", in: as(mine), wantSkip: true},
		{name: "managedBy names this controller", in: as(mine, tbManagedBy(mine))},
		{name: "managedBy names the default controller explicitly", in: as(batchv1.JobControllerName, tbManagedBy(batchv1.JobControllerName))},
		{name: "managedBy names another controller", in: as(mine, tbManagedBy(other)), wantSkip: true},
		{name: "managedBy set, the default controller", in: as(batchv1.JobControllerName, tbManagedBy(mine)), wantSkip: true},
		{name: "a controller without a name", in: as(""), wantErr: true},
	}
}

func TestDecision10_ManagedBy(t *testing.T) {
	for _, tc := range tbD10Cases() {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr {
				_, err := Compute(tc.in)
				require.Error(t, err, "Compute(in)")
				assert.ErrorIs(t, err, ErrInvalidJob)
				assert.Contains(t, err.Error(), "ControllerName")
				return
			}
			p := tbCompute(t, tc.in)
			if tc.wantSkip {
				assert.NotEmpty(t, p.Skip, "Compute(in).Skip")
				assert.Contains(t, p.String(), "skip: ", "String of a skipped plan")
				assert.True(t, p.IsEmpty(), "a skipped plan asks for nothing")
				return
			}
			assert.Empty(t, p.Skip, "Compute(in).Skip")
			assert.Len(t, p.Create, 1, "a handled Job gets its pod")
			assert.True(t, p.StatusChanged, "a handled Job gets its startTime")
		})
	}
}

type tbD11Case struct {
	name          string
	in            Input
	wantCompleted string
	wantSucceeded int32
	wantFailedIx  *string
	wantDelete    []string
	wantCreate    []int
	wantRemove    []string
	// wantRecordFailed is uncountedTerminatedPods.failed of RecordStatus;
	// wantFailed is status.failed once the removals are done.
	wantRecordFailed []string
	wantFailed       int32
}

func (c tbD11Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD11Cases() []tbD11Case {
	elastic := func(n int32, mods ...func(*batchv1.Job)) *batchv1.Job {
		return tbJob(append([]func(*batchv1.Job){tbIndexed, tbSize(n, n)}, mods...)...)
	}
	completed := func(s string, n int32) func(*batchv1.Job) {
		return tbStatus(func(st *batchv1.JobStatus) { st.CompletedIndexes, st.Succeeded = s, n })
	}
	return []tbD11Case{
		{
			name:          "scale-down trims completedIndexes and lowers succeeded",
			in:            tbInput(elastic(3, completed("0,3-4", 3)), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantCompleted: "0", wantSucceeded: 1,
		},
		{
			name:          "scale-down removes the pods of indexes out of range",
			in:            tbInput(elastic(2), tbPod("p-0", tbIx(0)), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2)), tbPod("p-3", tbIx(3))),
			wantDelete:    []string{"p-2", "p-3"},
			wantCompleted: "",
		},
		{
			name:          "scale-up creates the new indexes",
			in:            tbInput(elastic(5, completed("0-2", 3))),
			wantCompleted: "0-2", wantSucceeded: 3,
			wantCreate: []int{3, 4},
		},
		{
			name: "finished pods of indexes out of range lose their finalizer without counting",
			in: tbInput(elastic(2, completed("0", 1)), tbPod("p-1", tbIx(1)),
				tbPod("p-3", tbIx(3), tbSucceeded), tbPod("p-4", tbIx(4), tbFailed)),
			wantCompleted: "0", wantSucceeded: 1,
			wantRemove: []string{"p-3", "p-4"},
		},
		{
			name: "a failure recorded before a scale-down took its index away stays a failure",
			in: tbInput(elastic(2, completed("0", 1), tbStatus(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{"p-3"} })),
				tbPod("p-1", tbIx(1)), tbPod("p-3", tbIx(3), tbFailed)),
			wantCompleted: "0", wantSucceeded: 1,
			wantRemove:       []string{"p-3"},
			wantRecordFailed: []string{"p-3"},
			wantFailed:       1,
		},
		{
			// Issue 25, the interleaving of sim seed 5202 at a 20% fault rate: the
			// failing Job recorded its pods being deleted as failed while their
			// indexes were valid, the write's answer was lost (it was applied), the
			// pods ended with exit code 137, and a scale-down took their indexes
			// away. A pod counts by its state when its finalizer goes: p-3 is an
			// ignored failure and leaves the list uncounted, p-2 stays a failure.
			// Upstream counts both.
			name: "a pod recorded as failed before a scale-down, then stopped with an ignored failure, is not counted",
			in: tbInput(elastic(2, completed("0,1", 2), tbReplaceFailed,
				tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionIgnore, 137)),
				tbWithCond(tbCond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, tbMsgBackoff)),
				tbStatus(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{"p-2", "p-3"} })),
				tbPod("p-2", tbIx(2), tbFailed, tbDeleted), tbPod("p-3", tbIx(3), tbFailedWith(137), tbDeleted)),
			wantCompleted: "0,1", wantSucceeded: 2,
			wantRemove:       []string{"p-2", "p-3"},
			wantRecordFailed: []string{"p-2"},
			wantFailed:       1,
		},
		{
			name: "scale-down trims failedIndexes",
			in: tbInput(elastic(2, tbPerIndex(0, -1), tbStatus(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("1,3") })),
				tbPod("p-0", tbIx(0))),
			wantFailedIx: ptr.To("1"),
		},
	}
}

func TestDecision11_ElasticIndexed(t *testing.T) {
	for _, tc := range tbD11Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Equal(t, tc.wantCompleted, p.Status.CompletedIndexes, "Status.CompletedIndexes")
			assert.Equal(t, tc.wantSucceeded, p.Status.Succeeded, "Status.Succeeded")
			if tc.wantFailedIx != nil {
				assert.Equal(t, tc.wantFailedIx, p.Status.FailedIndexes, "Status.FailedIndexes")
			}
			if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
			}
			for _, d := range p.Delete {
				assert.True(t, d.RemoveFinalizerFirst, "out-of-range pod %s is removed without counting", d.Pod.Name)
			}
			if diff := cmp.Diff(tc.wantCreate, tbCreateIndexes(p.Create), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compute(in).Create indexes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			_, gotF := tbRecorded(p)
			if diff := cmp.Diff(tc.wantRecordFailed, gotF, tbEmptyEqual); diff != "" {
				t.Errorf("RecordStatus uncounted failed (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantFailed, p.Status.Failed, "Status.Failed")
			assert.Empty(t, p.Warnings, "an elastic resize is not bad input")
		})
	}
}

type tbD12Case struct {
	name        string
	in          Input
	wantRequeue time.Duration
}

func (c tbD12Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD12Cases() []tbD12Case {
	return []tbD12Case{
		{
			name:        "the rest of the active deadline",
			in:          tbInput(tbJob(tbDeadline(100), tbStartedAt(tbAgo(40*time.Second))), tbPod("p")),
			wantRequeue: 60 * time.Second,
		},
		{
			name:        "the job-wide backoff when it ends before the deadline",
			in:          tbInput(tbJob(tbDeadline(100), tbStartedAt(tbAgo(40*time.Second)), tbSize(3, 1)), tbPod("f", tbFailedAgo(3*time.Second))),
			wantRequeue: 7 * time.Second,
		},
		{
			name:        "the deadline when it comes before the backoff, to the millisecond",
			in:          tbInput(tbJob(tbDeadline(60), tbStartedAt(tbAgo(59500*time.Millisecond)), tbSize(3, 1)), tbPod("f", tbFailedAgo(3*time.Second))),
			wantRequeue: 500 * time.Millisecond,
		},
		{
			name: "the earliest per-index backoff",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(3, -1), tbDeadline(3600), tbStartedAt(tbAgo(time.Minute))),
				tbPod("p-0", tbIx(0), tbFailedAgo(2*time.Second)), tbPod("p-1", tbIx(1), tbFailedAgo(4*time.Second))),
			wantRequeue: 6 * time.Second,
		},
		{
			name:        "a resumed Job waits for its whole deadline",
			in:          tbInput(tbJob(tbDeadline(100), tbNotStarted, tbWithCond(tbCond(batchv1.JobSuspended, "JobSuspended", "Job suspended")))),
			wantRequeue: 100 * time.Second,
		},
		{
			// Suspension removed their finalizers and deleted them: no failures, so
			// no backoff after the resume (the record rebuilt from the pods must not
			// count them).
			name: "pods stopped for suspension do not hold back the resumed Job",
			in: tbInput(tbJob(tbSize(3, 2), tbNotStarted, tbWithCond(tbCond(batchv1.JobSuspended, "JobSuspended", "Job suspended"))),
				tbPod("a", tbDeleted, tbNoFinalizer), tbPod("b", tbDeleted, tbNoFinalizer, tbFailedAgo(time.Second))),
		},
		{
			name:        "a counted failure still listed keeps the backoff",
			in:          tbInput(tbJob(tbSize(3, 1)), tbPod("f", tbNoFinalizer, tbFailedAgo(3*time.Second))),
			wantRequeue: 7 * time.Second,
		},
		{
			name: "nothing pending: no requeue",
			in:   tbInput(tbJob(), tbPod("p")),
		},
		{
			name: "a suspended Job does not wait for its deadline",
			in:   tbInput(tbJob(tbSuspend, tbNotStarted, tbDeadline(60))),
		},
		{
			name: "a Job failing on its deadline does not requeue for it",
			in:   tbInput(tbJob(tbDeadline(60), tbStartedAt(tbAgo(time.Hour))), tbPod("p")),
		},
		{
			name: "a finished Job does not requeue",
			in: tbInput(tbJob(tbDeadline(60), tbWithCond(tbCond(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, tbMsgDeadline)),
				tbWithCond(tbCond(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded, tbMsgDeadline)))),
		},
	}
}

func TestDecision12_Requeue(t *testing.T) {
	for _, tc := range tbD12Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Equal(t, tc.wantRequeue, p.RequeueAfter, "Compute(in).RequeueAfter (reason %q)\nplan:\n%s", p.RequeueReason, p)
			assert.Equal(t, tc.wantRequeue > 0, p.RequeueReason != "", "RequeueReason %q", p.RequeueReason)
		})
	}
}

type tbD13Case struct {
	name        string
	in          Input
	wantErr     string // part of the error message; the error wraps ErrInvalidJob
	wantCreate  []int
	wantDelete  []string
	wantFailure string // reason of FailureTarget, "" for none
	wantFailed  int32
}

func (c tbD13Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD13Cases() []tbD13Case {
	undefaulted := func(mods ...func(*batchv1.Job)) *batchv1.Job {
		return tbJob(append([]func(*batchv1.Job){func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions, j.Spec.BackoffLimit = nil, nil, nil
			j.Spec.CompletionMode, j.Spec.Suspend, j.Spec.PodReplacementPolicy = nil, nil, nil
			j.Status = batchv1.JobStatus{}
		}}, mods...)...)
	}
	return []tbD13Case{
		{
			name:       "nil parallelism and completions mean one pod",
			in:         tbInput(undefaulted()),
			wantCreate: []int{-1},
		},
		{
			name:       "nil parallelism and completions mean completions 1, not a work queue",
			in:         tbInput(undefaulted(), tbPod("s", tbSucceeded), tbPod("r")),
			wantDelete: []string{"r"},
		},
		{
			name:       "nil parallelism means 1",
			in:         tbInput(undefaulted(tbCompletions(3))),
			wantCreate: []int{-1},
		},
		{
			name:       "nil completionMode means NonIndexed",
			in:         tbInput(undefaulted(tbSize(2, 2))),
			wantCreate: []int{-1, -1},
		},
		{
			name:       "nil backoffLimit means 6: six failures are allowed",
			in:         tbInput(undefaulted(tbCompletions(9)), tbPods("f", 6, tbFailed)...),
			wantCreate: []int{-1},
			wantFailed: 6,
		},
		{
			name:        "nil backoffLimit means 6: the seventh failure fails the Job",
			in:          tbInput(undefaulted(tbCompletions(9)), tbPods("f", 7, tbFailed)...),
			wantFailure: batchv1.JobReasonBackoffLimitExceeded,
			wantFailed:  7,
		},
		{
			name: "nil backoffLimit with backoffLimitPerIndex means no job-wide limit",
			in: tbInput(undefaulted(tbIndexed, tbSize(8, 8), func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr.To[int32](1) }),
				tbIndexedPods("p", []int{0, 1, 2, 3, 4, 5, 6, 7}, tbFailed)...),
			wantCreate: []int{0, 1, 2, 3, 4, 5, 6, 7},
			wantFailed: 0, // each failed pod keeps its finalizer until its replacement exists
		},
		{
			name: "nil podReplacementPolicy with a pod failure policy means Failed",
			in: tbInput(undefaulted(tbSize(2, 1), func(j *batchv1.Job) {
				j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{tbExitRule(batchv1.PodFailurePolicyActionFailJob, 42)}}
			}), tbPod("t", tbDeleted)),
		},
		{
			name:       "nil podReplacementPolicy without a pod failure policy means TerminatingOrFailed",
			in:         tbInput(undefaulted(tbSize(2, 1)), tbPod("t", tbDeleted)),
			wantCreate: []int{-1},
			wantFailed: 1,
		},
		{
			name: "nil template labels and nil selector",
			in: tbInput(undefaulted(func(j *batchv1.Job) {
				j.Spec.Template.Labels = nil
				j.Spec.Selector = nil
			}), tbPod("o", tbOrphan)),
			wantCreate: []int{-1},
		},
		{name: "nil Workload", in: Input{ControllerName: batchv1.JobControllerName, Now: tbNow}, wantErr: "Input.Workload is nil"},
		{
			name:    "unknown completion mode",
			in:      tbInput(tbJob(func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sideways")) }), tbPod("p")),
			wantErr: `spec.completionMode: unknown value "Sideways"`,
		},
		{name: "Indexed without completions", in: tbInput(tbJob(tbIndexed, tbNoCompletions)), wantErr: "spec.completions"},
		{name: "negative parallelism", in: tbInput(tbJob(tbParallelism(-1))), wantErr: "spec.parallelism"},
		{name: "negative completions", in: tbInput(tbJob(tbCompletions(-2))), wantErr: "spec.completions"},
		{name: "negative backoffLimit", in: tbInput(tbJob(tbBackoffLimit(-1))), wantErr: "spec.backoffLimit"},
	}
}

func TestDecision13_APIDefaults(t *testing.T) {
	for _, tc := range tbD13Cases() {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantErr != "" {
				p, err := Compute(tc.in)
				require.Error(t, err, "Compute(in)")
				assert.Nil(t, p, "plan returned with an error")
				assert.True(t, errors.Is(err, ErrInvalidJob), "Compute(in) error %v does not wrap ErrInvalidJob", err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			p := tbCompute(t, tc.in)
			if diff := cmp.Diff(tc.wantCreate, tbCreateIndexes(p.Create), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Compute(in).Create indexes (-want +got):\n%s\nplan:\n%s", diff, p)
			}
			if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
			}
			got := ""
			if c := tbCondOf(&p.Status, batchv1.JobFailureTarget); c != "" {
				got = c[len("True/"):]
				got = got[:len(tc.wantFailure)]
			}
			assert.Equal(t, tc.wantFailure, got, "FailureTarget reason")
			assert.Equal(t, tc.wantFailed, p.Status.Failed, "Status.Failed")
		})
	}
}

type tbD14Case struct {
	name        string
	in          Input
	wantAdopt   []string
	wantRelease []string
	wantActive  int32
	wantCreate  int
	wantRemove  []string
	wantDone    bool // SuccessCriteriaMet in Status
}

func (c tbD14Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD14Cases() []tbD14Case {
	other := tbPodLabels(map[string]string{"app": "other"})
	return []tbD14Case{
		{
			name:       "an orphan matching the selector is adopted and counted",
			in:         tbInput(tbJob(), tbPod("o", tbOrphan, tbNoFinalizer, tbReady)),
			wantAdopt:  []string{"o"},
			wantActive: 1,
		},
		{
			name:       "a finished orphan is adopted and counted as the upstream controller does",
			in:         tbInput(tbJob(), tbPod("o", tbOrphan, tbNoFinalizer, tbSucceeded)),
			wantAdopt:  []string{"o"},
			wantRemove: []string{"o"},
			wantDone:   true,
		},
		{
			name:       "an orphan not matching the selector is left alone",
			in:         tbInput(tbJob(), tbPod("o", tbOrphan, other)),
			wantActive: 1, wantCreate: 1,
		},
		{
			name:       "an orphan being deleted is not adopted",
			in:         tbInput(tbJob(), tbPod("o", tbOrphan, tbDeleted)),
			wantActive: 1, wantCreate: 1,
		},
		{
			name: "orphans are not adopted while the Job is being deleted",
			in:   tbInput(tbJob(tbJobDeleting), tbPod("o", tbOrphan)),
		},
		{
			name:       "a pod of another controller is not adopted",
			in:         tbInput(tbJob(), tbPod("o", tbOwnedBy("rs-uid"))),
			wantActive: 1, wantCreate: 1,
		},
		{
			name:        "an owned pod whose labels no longer match is released and not counted",
			in:          tbInput(tbJob(), tbPod("p", other)),
			wantRelease: []string{"p"},
			wantActive:  1, wantCreate: 1,
		},
		{
			name: "a Job being deleted releases nothing; the pod is no longer its own",
			in:   tbInput(tbJob(tbJobDeleting, tbStatus(func(s *batchv1.JobStatus) { s.Active = 1 })), tbPod("p", other)),
		},
		{
			name:       "a Job without a selector adopts nothing",
			in:         tbInput(tbJob(func(j *batchv1.Job) { j.Spec.Selector = nil }), tbPod("o", tbOrphan)),
			wantActive: 1, wantCreate: 1,
		},
	}
}

func TestDecision14_Ownership(t *testing.T) {
	for _, tc := range tbD14Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			if diff := cmp.Diff(tc.wantAdopt, tbActionNames(p.Adopt), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Adopt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRelease, tbActionNames(p.Release), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Release (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantActive, p.Status.Active, "Status.Active\nplan:\n%s", p)
			assert.Len(t, p.Create, tc.wantCreate, "Compute(in).Create")
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantDone, tbCondOf(&p.Status, batchv1.JobSuccessCriteriaMet) != "", "SuccessCriteriaMet\nplan:\n%s", p)
			for _, a := range append(p.Adopt, p.Release...) {
				assert.NotEmpty(t, a.Reason, "reason for %s", a.Pod.Name)
			}
		})
	}
}

type tbD15Case struct {
	name                string
	in                  Input
	wantRemove          []string
	wantRecordSucceeded []string
	wantRecordFailed    []string
	wantCounts          tbCounts
	wantCompleted       string
}

func (c tbD15Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD15Cases() []tbD15Case {
	return []tbD15Case{
		{
			name: "no creation or deletion; every finalizer removed, finished pods counted first",
			in: tbInput(tbJob(tbJobDeleting, tbSize(5, 5)),
				tbPod("r", tbReady), tbPod("s", tbSucceeded), tbPod("f", tbFailed), tbPod("t", tbDeleted), tbPod("done", tbSucceeded, tbNoFinalizer)),
			wantRemove:          []string{"r", "s", "f", "t"},
			wantRecordSucceeded: []string{"s"},
			wantRecordFailed:    []string{"f", "t"},
			wantCounts:          tbCounts{Active: 1, Ready: 1, Terminating: 1, Succeeded: 1, Failed: 2},
		},
		{
			name: "Indexed: succeeded indexes recorded, the others only lose their finalizer",
			in: tbInput(tbJob(tbJobDeleting, tbIndexed, tbSize(3, 3)),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1)), tbPod("p-7", tbIx(7))),
			wantRemove:    []string{"p-0", "p-1", "p-7"},
			wantCounts:    tbCounts{Active: 2, Succeeded: 1},
			wantCompleted: "0",
		},
		{
			name:       "a Job being deleted whose pods carry no finalizer needs nothing",
			in:         tbInput(tbJob(tbJobDeleting, tbStatus(func(s *batchv1.JobStatus) { s.Active = 1 })), tbPod("r", tbNoFinalizer)),
			wantCounts: tbCounts{Active: 1},
		},
	}
}

func TestDecision15_JobBeingDeleted(t *testing.T) {
	for _, tc := range tbD15Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			assert.Empty(t, p.Create, "Compute(in).Create")
			assert.Empty(t, p.Delete, "Compute(in).Delete")
			assert.Empty(t, p.Adopt, "Compute(in).Adopt")
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			gotS, gotF := tbRecorded(p)
			if diff := cmp.Diff(tc.wantRecordSucceeded, gotS, tbEmptyEqual); diff != "" {
				t.Errorf("RecordStatus uncounted succeeded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRecordFailed, gotF, tbEmptyEqual); diff != "" {
				t.Errorf("RecordStatus uncounted failed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCounts, tbCountsOf(&p.Status)); diff != "" {
				t.Errorf("Compute(in).Status counters (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantCompleted, p.Status.CompletedIndexes, "Status.CompletedIndexes")
			if len(tc.wantRemove) == 0 {
				assert.True(t, p.IsEmpty(), "IsEmpty\nplan:\n%s", p)
			}
		})
	}
}

// Succeeded indexes at or above completions in the status of a Job that is not
// elastic are damaged data: they are dropped from completedIndexes (silently, as for
// an elastic Job that shrank), and the succeeded counter does not go down, which the API server would refuse on every
// write. An elastic Job (completions == parallelism) that shrank may lower it.
func TestIndexedSucceededNeverDecreasesOutsideElastic(t *testing.T) {
	damaged := func(parallelism int32) Input {
		return tbInput(tbJob(tbIndexed, tbSize(3, parallelism), tbStatus(func(s *batchv1.JobStatus) {
			s.CompletedIndexes, s.Succeeded = "7", 1
		})))
	}
	p := tbCompute(t, damaged(1)) // tbCheckPlan: the API server accepts the writes
	assert.Equal(t, "", p.Status.CompletedIndexes, "the index beyond completions is dropped")
	assert.Equal(t, int32(1), p.Status.Succeeded, "status.succeeded of a Job that is not elastic")

	p = tbCompute(t, damaged(3))
	assert.Equal(t, int32(0), p.Status.Succeeded, "an elastic Job counts what its indexes say")
}
