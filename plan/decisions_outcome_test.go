package plan

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// Tables for decisions 1 to 4 of issue 3: how pods are classified, when a Job fails,
// when it succeeds, and the two steps of its terminal condition.

// tbCounts are the counters of a status, compared as one value.
type tbCounts struct {
	Active, Ready, Terminating, Succeeded, Failed int32
}

func tbCountsOf(st *batchv1.JobStatus) tbCounts {
	return tbCounts{Active: st.Active, Ready: ptr.Deref(st.Ready, 0), Terminating: ptr.Deref(st.Terminating, 0), Succeeded: st.Succeeded, Failed: st.Failed}
}

// tbRecorded returns the uncounted UIDs of a RecordStatus (nil when there is none).
func tbRecorded(p *Plan) (succeeded, failed []string) {
	if p.RecordStatus == nil || p.RecordStatus.UncountedTerminatedPods == nil {
		return nil, nil
	}
	u := p.RecordStatus.UncountedTerminatedPods
	return tbUIDs(u.Succeeded), tbUIDs(u.Failed)
}

func tbWithInput(in Input, f func(*Input)) Input {
	f(&in)
	return in
}

// Messages and reasons the upstream controller writes, spelled out here so that a
// change of the package's constants fails the tests.
const (
	tbMsgBackoff       = "Job has reached the specified backoff limit"
	tbMsgDeadline      = "Job was active longer than specified deadline"
	tbMsgMaxFailed     = "Job has exceeded the specified maximal number of failed indexes"
	tbMsgFailedIndexes = "Job has failed indexes"
	tbMsgCompletions   = "Reached expected number of succeeded pods"
)

type tbD1Case struct {
	name                string
	in                  Input
	wantCounts          tbCounts
	wantRemove          []string
	wantCreate          int
	wantRecordSucceeded []string
	wantRecordFailed    []string
	wantCompleted       string
}

func (c tbD1Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD1Cases() []tbD1Case {
	return []tbD1Case{
		{
			name:       "running pod is active and not ready",
			in:         tbInput(tbJob(), tbPod("p")),
			wantCounts: tbCounts{Active: 1},
		},
		{
			name:       "ready pod counts as ready",
			in:         tbInput(tbJob(), tbPod("p", tbReady)),
			wantCounts: tbCounts{Active: 1, Ready: 1},
		},
		{
			name:       "pending pod is active",
			in:         tbInput(tbJob(), tbPod("p", tbPending)),
			wantCounts: tbCounts{Active: 1},
		},
		{
			name:       "pod in phase Unknown is active",
			in:         tbInput(tbJob(), tbPod("p", tbPhase(corev1.PodUnknown))),
			wantCounts: tbCounts{Active: 1},
		},
		{
			name:             "pod being deleted is terminating and failed under TerminatingOrFailed",
			in:               tbInput(tbJob(), tbPod("p", tbReady, tbDeleted)),
			wantCounts:       tbCounts{Active: 1, Terminating: 1, Failed: 1},
			wantRemove:       []string{"p"},
			wantCreate:       1,
			wantRecordFailed: []string{"p"},
		},
		{
			name:       "pod being deleted is terminating but not failed under podReplacementPolicy Failed",
			in:         tbInput(tbJob(tbReplaceFailed), tbPod("p", tbDeleted)),
			wantCounts: tbCounts{Terminating: 1},
		},
		{
			name:                "pod being deleted after it succeeded counts as succeeded",
			in:                  tbInput(tbJob(), tbPod("p", tbSucceeded, tbDeleted)),
			wantCounts:          tbCounts{Succeeded: 1},
			wantRemove:          []string{"p"},
			wantRecordSucceeded: []string{"p"},
		},
		{
			name:             "pod being deleted after it failed is failed, not terminating",
			in:               tbInput(tbJob(), tbPod("p", tbFailed, tbDeleted)),
			wantCounts:       tbCounts{Active: 1, Failed: 1},
			wantRemove:       []string{"p"},
			wantCreate:       1,
			wantRecordFailed: []string{"p"},
		},
		{
			name:             "pending pod being deleted is terminating",
			in:               tbInput(tbJob(tbCompletions(2)), tbPod("p", tbPending, tbDeleted)),
			wantCounts:       tbCounts{Active: 1, Terminating: 1, Failed: 1},
			wantRemove:       []string{"p"},
			wantCreate:       1,
			wantRecordFailed: []string{"p"},
		},
		{
			name:             "failed pod is newly failed",
			in:               tbInput(tbJob(), tbPod("p", tbFailed)),
			wantCounts:       tbCounts{Active: 1, Failed: 1},
			wantRemove:       []string{"p"},
			wantCreate:       1,
			wantRecordFailed: []string{"p"},
		},
		{
			name: "succeeded pod without the finalizer was counted before",
			in: tbInput(tbJob(tbCompletions(2), tbStatus(func(s *batchv1.JobStatus) { s.Succeeded = 1 })),
				tbPod("p", tbSucceeded, tbNoFinalizer)),
			wantCounts: tbCounts{Active: 1, Succeeded: 1},
			wantCreate: 1,
		},
		{
			name: "failed pod already uncounted is not recorded again",
			in: tbInput(tbJob(tbStatus(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{"p"} })),
				tbPod("p", tbFailed)),
			wantCounts:       tbCounts{Active: 1, Failed: 1},
			wantRemove:       []string{"p"},
			wantCreate:       1,
			wantRecordFailed: []string{"p"},
		},
		{
			name: "pod whose finalizer removal is pending counts as without finalizer",
			in: tbWithInput(tbInput(tbJob(tbStatus(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{"p"} })),
				tbPod("p", tbFailed)), func(in *Input) { in.PendingFinalizerRemovals = sets.New[types.UID]("p") }),
			wantCounts: tbCounts{Active: 1, Failed: 1},
			wantCreate: 1,
		},
		{
			// It was recorded as failed (the Job was failing, or it was being
			// deleted), its finalizer removal did not happen, and it succeeded since:
			// it still carries the finalizer, so it was never counted, and it counts
			// by its state when the finalizer goes. Upstream keeps it as failed.
			name: "succeeded pod recorded as failed is recorded again as succeeded",
			in: tbInput(tbJob(tbCompletions(2), tbStatus(func(s *batchv1.JobStatus) { s.UncountedTerminatedPods.Failed = []types.UID{"p"} })),
				tbPod("p", tbSucceeded)),
			wantCounts:          tbCounts{Active: 1, Succeeded: 1},
			wantRemove:          []string{"p"},
			wantCreate:          1,
			wantRecordSucceeded: []string{"p"},
		},
		{
			// Recorded as failed while running because the Job was failing, then
			// killed with an exit code an Ignore rule matches: not counted.
			name: "pod recorded as failed whose failure is now ignored is not counted",
			in: tbInput(tbJob(tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionIgnore, 137)), tbStatus(func(s *batchv1.JobStatus) {
				s.UncountedTerminatedPods.Failed = []types.UID{"p", "q"}
			})), tbPod("p", tbFailedWith(137)), tbPod("q", tbFailedWith(1))),
			wantCounts:       tbCounts{Active: 1, Failed: 1},
			wantRemove:       []string{"p", "q"},
			wantCreate:       1,
			wantRecordFailed: []string{"q"},
		},
		{
			name:       "pod controlled by another object is ignored",
			in:         tbInput(tbJob(), tbPod("p", tbOwnedBy("rs-uid"))),
			wantCounts: tbCounts{Active: 1},
			wantCreate: 1,
		},
		{
			name:       "nil pod in the list is ignored",
			in:         tbInput(tbJob(), nil, tbPod("p")),
			wantCounts: tbCounts{Active: 1},
		},
		{
			name:          "succeeded pod of an Indexed Job is counted by its index",
			in:            tbInput(tbJob(tbIndexed, tbSize(2, 2)), tbIndexedPods("p", []int{0}, tbSucceeded)[0], tbPod("p-1", tbIx(1))),
			wantCounts:    tbCounts{Active: 1, Succeeded: 1},
			wantRemove:    []string{"p-0"},
			wantCompleted: "0",
		},
		{
			name: "succeeded pod of an already completed index is not counted again",
			in: tbInput(tbJob(tbIndexed, tbSize(2, 2), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-0b", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1))),
			wantCounts:    tbCounts{Active: 1, Succeeded: 1},
			wantRemove:    []string{"p-0", "p-0b"},
			wantCompleted: "0",
		},
		{
			name:       "finished pod with an index at or above completions is not counted",
			in:         tbInput(tbJob(tbIndexed, tbSize(2, 2)), tbPod("p-5", tbIx(5), tbFailed), tbPod("p-6", tbIx(6), tbSucceeded)),
			wantCounts: tbCounts{Active: 2},
			wantRemove: []string{"p-5", "p-6"},
			wantCreate: 2,
		},
	}
}

func TestDecision1_PodClassification(t *testing.T) {
	for _, tc := range tbD1Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			if diff := cmp.Diff(tc.wantCounts, tbCountsOf(&p.Status)); diff != "" {
				t.Errorf("Compute(in).Status counters (-want +got):\n%s\nplan:\n%s", diff, p)
			}
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			assert.Len(t, p.Create, tc.wantCreate, "Compute(in).Create")
			gotS, gotF := tbRecorded(p)
			if diff := cmp.Diff(tc.wantRecordSucceeded, gotS, tbEmptyEqual); diff != "" {
				t.Errorf("RecordStatus uncounted succeeded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRecordFailed, gotF, tbEmptyEqual); diff != "" {
				t.Errorf("RecordStatus uncounted failed (-want +got):\n%s", diff)
			}
			assert.Equal(t, tc.wantCompleted, p.Status.CompletedIndexes, "Status.CompletedIndexes")
		})
	}
}

// tbEmptyEqual makes nil and empty slices equal.
var tbEmptyEqual = cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

type tbD2Case struct {
	name        string
	in          Input
	wantReason  string // reason of FailureTarget in Status; "" means the Job does not fail
	wantMessage string
	// wantFinal says whether the Failed condition (same reason and message) is in
	// Status as well.
	wantFinal         bool
	wantFailedIndexes *string // checked when not nil
}

func (c tbD2Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD2Cases() []tbD2Case {
	failJob42 := tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionFailJob, 42))
	ignoreDisruption := tbConditionRule(batchv1.PodFailurePolicyActionIgnore, corev1.DisruptionTarget)
	return []tbD2Case{
		{
			name: "an existing FailureTarget is kept and finished once nothing is left",
			in: tbInput(tbJob(tbBackoffLimit(0), tbWithCond(tbCond(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, tbMsgDeadline)),
				tbStatus(func(s *batchv1.JobStatus) { s.Failed = 3 }))),
			wantReason: batchv1.JobReasonDeadlineExceeded, wantMessage: tbMsgDeadline, wantFinal: true,
		},
		{
			name:       "a FailJob rule matching an exit code",
			in:         tbInput(tbJob(failJob42), tbPod("p", tbFailedWith(42))),
			wantReason: batchv1.JobReasonPodFailurePolicy, wantMessage: "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0",
			wantFinal: true,
		},
		{
			name: "a FailJob rule matching a pod condition, after a rule that does not match",
			in: tbInput(tbJob(tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionIgnore, 5), tbConditionRule(batchv1.PodFailurePolicyActionFailJob, corev1.DisruptionTarget))),
				tbPod("p", tbFailed, tbPodCondition(corev1.DisruptionTarget))),
			wantReason: batchv1.JobReasonPodFailurePolicy, wantMessage: "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 1",
			wantFinal: true,
		},
		{
			name:       "a FailJob match comes before the backoff limit",
			in:         tbInput(tbJob(failJob42, tbBackoffLimit(0), tbSize(2, 2)), tbPod("a", tbFailed), tbPod("b", tbFailedWith(42))),
			wantReason: batchv1.JobReasonPodFailurePolicy, wantMessage: "Container main for pod ns/b failed with exit code 42 matching FailJob rule at index 0",
			wantFinal: true,
		},
		{
			name:       "a FailJob rule on a pod still running does nothing",
			in:         tbInput(tbJob(tbFailurePolicy(tbConditionRule(batchv1.PodFailurePolicyActionFailJob, corev1.DisruptionTarget))), tbPod("p", tbPodCondition(corev1.DisruptionTarget))),
			wantReason: "",
		},
		{
			name:       "failures beyond backoffLimit",
			in:         tbInput(tbJob(tbBackoffLimit(1), tbSize(3, 1)), tbPod("a", tbFailed), tbPod("b", tbFailed)),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff, wantFinal: true,
		},
		{
			name:       "failures equal to backoffLimit do not fail the Job",
			in:         tbInput(tbJob(tbBackoffLimit(2), tbSize(3, 1)), tbPod("a", tbFailed), tbPod("b", tbFailed)),
			wantReason: "",
		},
		{
			name: "counted, uncounted and new failures add up",
			in: tbInput(tbJob(tbBackoffLimit(2), tbStatus(func(s *batchv1.JobStatus) {
				s.Failed = 1
				s.UncountedTerminatedPods.Failed = []types.UID{"gone"}
			})), tbPod("a", tbFailed)),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff, wantFinal: true,
		},
		{
			name:       "failures matched by Ignore do not count",
			in:         tbInput(tbJob(tbBackoffLimit(0), tbFailurePolicy(ignoreDisruption)), tbPod("p", tbFailed, tbPodCondition(corev1.DisruptionTarget))),
			wantReason: "",
		},
		{
			name:       "failures matched by Count count",
			in:         tbInput(tbJob(tbBackoffLimit(0), tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionCount, 1))), tbPod("p", tbFailed)),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff, wantFinal: true,
		},
		{
			name:       "OnFailure: container restarts of active pods reaching backoffLimit",
			in:         tbInput(tbJob(tbOnFailure, tbBackoffLimit(2), tbSize(2, 2)), tbPod("a", tbRestarts(1)), tbPod("b", tbRestarts(1))),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff,
		},
		{
			name:       "OnFailure: restarts below backoffLimit",
			in:         tbInput(tbJob(tbOnFailure, tbBackoffLimit(3), tbSize(2, 2)), tbPod("a", tbRestarts(1)), tbPod("b", tbRestarts(1))),
			wantReason: "",
		},
		{
			name:       "OnFailure: backoffLimit 0 fails on any restart, init containers included",
			in:         tbInput(tbJob(tbOnFailure, tbBackoffLimit(0)), tbPod("a", tbPending, tbInitRestarts(1))),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff,
		},
		{
			name:       "OnFailure: restarts of finished pods do not count",
			in:         tbInput(tbJob(tbOnFailure, tbBackoffLimit(1), tbSize(2, 1)), tbPod("a", tbSucceeded, tbRestarts(3)), tbPod("b")),
			wantReason: "",
		},
		{
			name:       "restartPolicy Never: container restarts do not count",
			in:         tbInput(tbJob(tbBackoffLimit(1)), tbPod("a", tbRestarts(4))),
			wantReason: "",
		},
		{
			name:       "activeDeadlineSeconds passed",
			in:         tbInput(tbJob(tbDeadline(60), tbStartedAt(tbAgo(61*time.Second))), tbPod("p", tbReady)),
			wantReason: batchv1.JobReasonDeadlineExceeded, wantMessage: tbMsgDeadline,
		},
		{
			name:       "activeDeadlineSeconds reached exactly",
			in:         tbInput(tbJob(tbDeadline(60), tbStartedAt(tbAgo(60*time.Second)))),
			wantReason: batchv1.JobReasonDeadlineExceeded, wantMessage: tbMsgDeadline, wantFinal: true,
		},
		{
			name:       "activeDeadlineSeconds not passed",
			in:         tbInput(tbJob(tbDeadline(60), tbStartedAt(tbAgo(59*time.Second))), tbPod("p")),
			wantReason: "",
		},
		{
			name:       "activeDeadlineSeconds is not checked while suspended",
			in:         tbInput(tbJob(tbSuspend, tbDeadline(60), tbStartedAt(tbAgo(2*time.Hour))), tbPod("p")),
			wantReason: "",
		},
		{
			name:       "backoffLimit is checked before the deadline",
			in:         tbInput(tbJob(tbBackoffLimit(0), tbDeadline(60), tbStartedAt(tbAgo(2*time.Hour))), tbPod("p", tbFailed)),
			wantReason: batchv1.JobReasonBackoffLimitExceeded, wantMessage: tbMsgBackoff, wantFinal: true,
		},
		{
			name: "FailIndex fails the index, not the Job",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(1, -1), tbFailurePolicy(tbExitRule(batchv1.PodFailurePolicyActionFailIndex, 3))),
				tbPod("p-0", tbIx(0), tbFailedWith(3)), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To("0"),
		},
		{
			name: "an index whose failure count reaches backoffLimitPerIndex fails",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(1, -1)),
				tbPod("p-0", tbIx(0), tbFailureCount(1, 0), tbFailed), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To("0"),
		},
		{
			name: "an index below backoffLimitPerIndex is retried",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(2, -1)),
				tbPod("p-0", tbIx(0), tbFailureCount(1, 0), tbFailed), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To(""),
		},
		{
			name: "an Ignore match does not fail the index",
			in: tbInput(tbJob(tbSize(2, 2), tbPerIndex(0, -1), tbFailurePolicy(ignoreDisruption)),
				tbPod("p-0", tbIx(0), tbFailed, tbPodCondition(corev1.DisruptionTarget)), tbPod("p-1", tbIx(1))),
			wantReason: "", wantFailedIndexes: ptr.To(""),
		},
		{
			name: "failed indexes beyond maxFailedIndexes",
			in: tbInput(tbJob(tbSize(4, 4), tbPerIndex(0, 1)),
				tbPod("p-0", tbIx(0), tbFailed), tbPod("p-1", tbIx(1), tbFailed), tbPod("p-2", tbIx(2)), tbPod("p-3", tbIx(3))),
			wantReason: batchv1.JobReasonMaxFailedIndexesExceeded, wantMessage: tbMsgMaxFailed, wantFailedIndexes: ptr.To("0,1"),
		},
		{
			name: "failed indexes at maxFailedIndexes do not fail the Job",
			in: tbInput(tbJob(tbSize(4, 4), tbPerIndex(0, 2)),
				tbPod("p-0", tbIx(0), tbFailed), tbPod("p-1", tbIx(1), tbFailed), tbPod("p-2", tbIx(2)), tbPod("p-3", tbIx(3))),
			wantReason: "", wantFailedIndexes: ptr.To("0,1"),
		},
		{
			name:       "every index finished with some failed",
			in:         tbInput(tbJob(tbSize(2, 2), tbPerIndex(0, -1)), tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbFailed)),
			wantReason: batchv1.JobReasonFailedIndexes, wantMessage: tbMsgFailedIndexes, wantFinal: true, wantFailedIndexes: ptr.To("1"),
		},
		{
			name: "failed indexes already in the status count",
			in: tbInput(tbJob(tbSize(2, 2), tbPerIndex(0, -1), tbStatus(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("0") })),
				tbPod("p-1", tbIx(1), tbSucceeded)),
			wantReason: batchv1.JobReasonFailedIndexes, wantMessage: tbMsgFailedIndexes, wantFinal: true, wantFailedIndexes: ptr.To("0"),
		},
		{
			// Two pods of one index (a creation hidden by a timeout): the index has
			// succeeded, so the other's failure does not fail it. Both at once would
			// overlap completedIndexes and failedIndexes, which the API server refuses.
			name: "a duplicate failing at a completed index does not fail it",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, -1), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-0b", tbIx(0), tbFailed), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To(""),
		},
		{
			name: "a duplicate succeeding at a failed index does not complete it",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, -1), tbStatus(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("0") })),
				tbPod("p-0b", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To("0"),
		},
		{
			name: "a success and a failure of one index seen together: the success wins",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, -1)),
				tbPod("p-0a", tbIx(0), tbSucceeded), tbPod("p-0b", tbIx(0), tbFailed), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantReason: "", wantFailedIndexes: ptr.To(""),
		},
		{
			name: "per-index failure comes before the success policy",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, 0), tbSuccessPolicy(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](1)})),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbFailed), tbPod("p-2", tbIx(2))),
			wantReason: batchv1.JobReasonMaxFailedIndexesExceeded, wantMessage: tbMsgMaxFailed, wantFailedIndexes: ptr.To("1"),
		},
		{
			name: "the deadline comes before per-index failures",
			in: tbInput(tbJob(tbSize(3, 3), tbPerIndex(0, 0), tbDeadline(10)),
				tbPod("p-0", tbIx(0), tbFailed)),
			wantReason: batchv1.JobReasonDeadlineExceeded, wantMessage: tbMsgDeadline, wantFinal: true, wantFailedIndexes: ptr.To("0"),
		},
	}
}

func TestDecision2_FailureOrder(t *testing.T) {
	for _, tc := range tbD2Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			want, wantFinal := "", ""
			if tc.wantReason != "" {
				want = "True/" + tc.wantReason + "/" + tc.wantMessage
				if tc.wantFinal {
					wantFinal = want
				}
			}
			assert.Equal(t, want, tbCondOf(&p.Status, batchv1.JobFailureTarget), "FailureTarget in Status\nplan:\n%s", p)
			assert.Equal(t, wantFinal, tbCondOf(&p.Status, batchv1.JobFailed), "Failed in Status\nplan:\n%s", p)
			assert.Empty(t, tbCondOf(&p.Status, batchv1.JobSuccessCriteriaMet), "SuccessCriteriaMet in Status")
			if tc.wantFinal {
				assert.Nil(t, p.Status.CompletionTime, "completionTime of a failed Job")
			}
			if tc.wantReason != "" {
				assert.Empty(t, p.Create, "a failing Job creates no pods")
			}
			if tc.wantFailedIndexes != nil {
				assert.Equal(t, tc.wantFailedIndexes, p.Status.FailedIndexes, "Status.FailedIndexes")
			}
		})
	}
}

type tbD3Case struct {
	name string
	in   Input
	// wantInterim is "Reason/Message" of SuccessCriteriaMet in Status, "" for none.
	wantInterim  string
	wantComplete bool
	wantDelete   []string
	wantCreate   int
	wantEvents   []string // event reasons, checked when not nil
}

func (c tbD3Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD3Cases() []tbD3Case {
	completions := batchv1.JobReasonCompletionsReached + "/" + tbMsgCompletions
	metByPolicy := tbWithCond(tbCond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, "Matched rules at index 0"))
	return []tbD3Case{
		{
			name:        "completions reached",
			in:          tbInput(tbJob(tbSize(2, 2)), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded)),
			wantInterim: completions, wantComplete: true, wantEvents: []string{"Completed"},
		},
		{
			name: "completions reached with counted and uncounted successes",
			in: tbInput(tbJob(tbSize(3, 1), tbStatus(func(s *batchv1.JobStatus) {
				s.Succeeded = 1
				s.UncountedTerminatedPods.Succeeded = []types.UID{"gone"}
			})), tbPod("a", tbSucceeded)),
			wantInterim: completions, wantComplete: true,
		},
		{
			name:       "completions not reached",
			in:         tbInput(tbJob(tbSize(3, 1)), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded)),
			wantCreate: 1,
		},
		{
			name:        "zero completions: complete at once",
			in:          tbInput(tbJob(tbSize(0, 3))),
			wantInterim: completions, wantComplete: true,
		},
		{
			name:        "more successes than completions",
			in:          tbInput(tbJob(tbSize(1, 2)), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded)),
			wantInterim: completions, wantComplete: true, wantEvents: []string{"TooManySucceededPods", "Completed"},
		},
		{
			name:        "completions reached while a pod is still active: it is deleted and Complete waits",
			in:          tbInput(tbJob(tbSize(1, 2)), tbPod("a", tbSucceeded), tbPod("b")),
			wantInterim: completions, wantDelete: []string{"b"},
		},
		{
			name:        "without completions: one success and nothing active",
			in:          tbInput(tbJob(tbNoCompletions, tbParallelism(2)), tbPod("a", tbSucceeded), tbPod("b", tbFailed)),
			wantInterim: completions, wantComplete: true,
		},
		{
			name: "without completions: one success while others still run",
			in:   tbInput(tbJob(tbNoCompletions, tbParallelism(3)), tbPod("a", tbSucceeded), tbPod("b")),
		},
		{
			name: "success policy on indexes deletes the remaining pods",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 3), tbSuccessPolicy(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")})),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2), tbReady)),
			wantInterim: batchv1.JobReasonSuccessPolicy + "/Matched rules at index 0", wantDelete: []string{"p-1", "p-2"},
		},
		{
			name: "success policy matched by its second rule",
			in: tbInput(tbJob(tbIndexed, tbSize(4, 4), tbSuccessPolicy(
				batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("3")},
				batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](2)})),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbSucceeded)),
			wantInterim: batchv1.JobReasonSuccessPolicy + "/Matched rules at index 1", wantComplete: true,
		},
		{
			name: "success policy not met",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 1), tbSuccessPolicy(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0-1")})),
				tbPod("p-0", tbIx(0), tbSucceeded)),
			wantCreate: 1,
		},
		{
			name: "an existing SuccessCriteriaMet wins over failures and the deadline",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 3), tbBackoffLimit(0), tbDeadline(1), metByPolicy,
				tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-1", tbIx(1), tbFailed)),
			wantInterim: batchv1.JobReasonSuccessPolicy + "/Matched rules at index 0", wantComplete: true,
		},
		{
			name: "an existing SuccessCriteriaMet deletes the active pods",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 3), metByPolicy, tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0", 1 })),
				tbPod("p-1", tbIx(1)), tbPod("p-2", tbIx(2))),
			wantInterim: batchv1.JobReasonSuccessPolicy + "/Matched rules at index 0", wantDelete: []string{"p-1", "p-2"},
		},
		{
			name: "Indexed: completed indexes reach completions",
			in: tbInput(tbJob(tbIndexed, tbSize(3, 3), tbStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes, s.Succeeded = "0-1", 2 })),
				tbPod("p-2", tbIx(2), tbSucceeded)),
			wantInterim: completions, wantComplete: true,
		},
	}
}

func TestDecision3_Success(t *testing.T) {
	for _, tc := range tbD3Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			want, wantComplete := "", ""
			if tc.wantInterim != "" {
				want = "True/" + tc.wantInterim
				if tc.wantComplete {
					wantComplete = want
				}
			}
			assert.Equal(t, want, tbCondOf(&p.Status, batchv1.JobSuccessCriteriaMet), "SuccessCriteriaMet in Status\nplan:\n%s", p)
			assert.Equal(t, wantComplete, tbCondOf(&p.Status, batchv1.JobComplete), "Complete in Status\nplan:\n%s", p)
			assert.Empty(t, tbCondOf(&p.Status, batchv1.JobFailureTarget), "FailureTarget in Status")
			if tc.wantComplete {
				assert.Equal(t, tbTime(tbNow), p.Status.CompletionTime, "completionTime")
			} else {
				assert.Nil(t, p.Status.CompletionTime, "completionTime")
			}
			if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
			}
			assert.Len(t, p.Create, tc.wantCreate, "Compute(in).Create")
			if tc.wantEvents != nil {
				// The events of finishing come from Settle (every removal accepted).
				var got []string
				for _, e := range append(slices.Clone(p.Events), p.Settle(tbAllRemoved(p)).Events...) {
					got = append(got, e.Reason)
				}
				assert.Equal(t, tc.wantEvents, got, "event reasons")
			}
		})
	}
}

type tbD4Case struct {
	name              string
	in                Input
	wantRecordConds   []batchv1.JobConditionType // True conditions of RecordStatus; nil when none is written
	wantConds         []batchv1.JobConditionType // True conditions of Status
	wantDelete        []string
	wantRemove        []string
	wantCounts        tbCounts
	wantCompletedTime bool
}

func (c tbD4Case) input() tbInputCase { return tbInputCase{c.name, c.in} }

func tbD4Cases() []tbD4Case {
	ft := tbWithCond(tbCond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, tbMsgBackoff))
	scm := tbWithCond(tbCond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, tbMsgCompletions))
	return []tbD4Case{
		{
			name:            "failing with a running pod: FailureTarget first, the pod deleted and counted failed",
			in:              tbInput(tbJob(tbBackoffLimit(0), tbSize(2, 2)), tbPod("f", tbFailed), tbPod("r", tbReady)),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantConds:       []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantDelete:      []string{"r"},
			wantRemove:      []string{"f", "r"},
			wantCounts:      tbCounts{Terminating: 1, Failed: 2},
		},
		{
			// As upstream, a failing Job deletes all its active pods at once (they
			// are all counted as failed in this sync), whatever the deletion cap.
			name: "failing deletes every active pod, above the deletion cap",
			in: tbWithInput(tbInput(tbJob(tbBackoffLimit(0), tbSize(3, 3)), tbPod("f", tbFailed), tbPod("r1", tbPending), tbPod("r2", tbReady)),
				func(in *Input) { in.Options.MaxDeletesPerSync = 1 }),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantConds:       []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantDelete:      []string{"r1", "r2"},
			wantRemove:      []string{"f", "r1", "r2"},
			wantCounts:      tbCounts{Terminating: 2, Failed: 3},
		},
		{
			name: "FailureTarget with a pod still terminating: Failed waits",
			in: tbInput(tbJob(ft, tbStatus(func(s *batchv1.JobStatus) { s.Failed, s.Terminating = 2, ptr.To[int32](1) })),
				tbPod("r", tbDeleted, tbNoFinalizer)),
			wantConds:  []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantCounts: tbCounts{Terminating: 1, Failed: 2},
		},
		{
			name:       "FailureTarget and nothing left: Failed",
			in:         tbInput(tbJob(ft, tbStatus(func(s *batchv1.JobStatus) { s.Failed = 2 }))),
			wantConds:  []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed},
			wantCounts: tbCounts{Failed: 2},
		},
		{
			name:              "SuccessCriteriaMet and nothing left: Complete with completionTime",
			in:                tbInput(tbJob(scm, tbStatus(func(s *batchv1.JobStatus) { s.Succeeded = 1 }))),
			wantConds:         []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete},
			wantCounts:        tbCounts{Succeeded: 1},
			wantCompletedTime: true,
		},
		{
			name:              "SuccessCriteriaMet with an uncounted pod: recorded first, Complete once its finalizer is gone",
			in:                tbInput(tbJob(tbSize(1, 1)), tbPod("a", tbSucceeded)),
			wantRecordConds:   []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantConds:         []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete},
			wantRemove:        []string{"a"},
			wantCounts:        tbCounts{Succeeded: 1},
			wantCompletedTime: true,
		},
		{
			name: "unsatisfied expectations delay the terminal condition",
			in: tbWithInput(tbInput(tbJob(ft, tbStatus(func(s *batchv1.JobStatus) { s.Failed = 2 }))),
				func(in *Input) { in.ExpectationsSatisfied = false }),
			wantConds:  []batchv1.JobConditionType{batchv1.JobFailureTarget},
			wantCounts: tbCounts{Failed: 2},
		},
		{
			name: "a full ledger delays the terminal condition",
			in: tbWithInput(tbInput(tbJob(tbSize(2, 2)), tbPod("a", tbSucceeded), tbPod("b", tbSucceeded)),
				func(in *Input) { in.Options.MaxUncounted = 1 }),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantConds:       []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantRemove:      []string{"a"},
			wantCounts:      tbCounts{Succeeded: 1},
		},
		{
			name:            "the ledger takes at most 500 entries: the rest wait and the Job does not finish",
			in:              tbInput(tbJob(tbSize(600, 600)), tbPods("s", 600, tbSucceeded)...),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantConds:       []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantRemove:      tbPodNames("s", 500),
			wantCounts:      tbCounts{Succeeded: 500},
		},
		{
			// As upstream, completedIndexes takes every succeeded index at once (the
			// index alone prevents counting twice); the cap holds back the finalizer
			// removals, and with them the terminal condition.
			name:            "Indexed: at most 500 finalizer removals for new completed indexes",
			in:              tbInput(tbJob(tbIndexed, tbSize(600, 600)), tbIndexedPods("s", tbSeq(600), tbSucceeded)...),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantConds:       []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantRemove:      tbPodNames("s", 500),
			wantCounts:      tbCounts{Succeeded: 600},
		},
		{
			name: "succeeding with running pods: their finalizers go, they are not counted",
			in: tbInput(tbJob(tbIndexed, tbSize(2, 2), tbSuccessPolicy(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")})),
				tbPod("p-0", tbIx(0), tbSucceeded), tbPod("p-1", tbIx(1), tbReady)),
			wantRecordConds: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantConds:       []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet},
			wantDelete:      []string{"p-1"},
			wantRemove:      []string{"p-0", "p-1"},
			wantCounts:      tbCounts{Terminating: 1, Succeeded: 1},
		},
	}
}

func TestDecision4_TwoStepTerminalConditions(t *testing.T) {
	for _, tc := range tbD4Cases() {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			var gotRecord []batchv1.JobConditionType
			if p.RecordStatus != nil {
				gotRecord = tbCondTypes(p.RecordStatus)
			}
			assert.Equal(t, tc.wantRecordConds, gotRecord, "True conditions of RecordStatus\nplan:\n%s", p)
			assert.Equal(t, tc.wantConds, tbCondTypes(&p.Status), "True conditions of Status\nplan:\n%s", p)
			if diff := cmp.Diff(tc.wantDelete, tbDeleteNames(p.Delete), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).Delete (-want +got):\n%s", diff)
			}
			for _, d := range p.Delete {
				assert.False(t, d.RemoveFinalizerFirst, "a finishing Job deletes %s without removing its finalizer first", d.Pod.Name)
			}
			if diff := cmp.Diff(tc.wantRemove, tbActionNames(p.RemoveFinalizers), tbEmptyEqual); diff != "" {
				t.Errorf("Compute(in).RemoveFinalizers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCounts, tbCountsOf(&p.Status)); diff != "" {
				t.Errorf("Compute(in).Status counters (-want +got):\n%s", diff)
			}
			if tc.wantCompletedTime {
				assert.Equal(t, tbTime(tbNow), p.Status.CompletionTime, "completionTime")
			} else {
				assert.Nil(t, p.Status.CompletionTime, "completionTime")
			}
			// Conditions added in this sync carry the sync's time; the others keep theirs.
			for _, c := range p.Status.Conditions {
				if tbHasCond(inputJob(tc.in).Status.Conditions, c.Type) {
					continue
				}
				assert.Equal(t, tbNow, c.LastTransitionTime.Time.UTC(), "lastTransitionTime of new condition %s", c.Type)
			}
		})
	}
}

func tbHasCond(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t {
			return true
		}
	}
	return false
}

// tbAllRemoved is the set of every UID the plan removes a finalizer from.
func tbAllRemoved(p *Plan) sets.Set[types.UID] {
	out := sets.New[types.UID]()
	for _, a := range p.RemoveFinalizers {
		out.Insert(a.Pod.UID)
	}
	return out
}

// A suspended Job has no start time (suspending clears it) but can still fail or
// complete with the pods it had; the API server requires a start time on a finished
// Job, so the write that finishes it sets one (tbCheckPlan validates both writes).
func TestDecision4_FinishingASuspendedJobSetsStartTime(t *testing.T) {
	suspended := tbWithCond(tbCond(batchv1.JobSuspended, "JobSuspended", "Job suspended"))
	cases := []struct {
		name      string
		in        Input
		wantFinal batchv1.JobConditionType
	}{
		{
			name:      "failed by the backoff limit while suspended",
			in:        tbInput(tbJob(tbSuspend, tbNotStarted, suspended, tbBackoffLimit(0)), tbPod("a", tbFailed)),
			wantFinal: batchv1.JobFailed,
		},
		{
			name:      "completed by its last pod while suspended",
			in:        tbInput(tbJob(tbSuspend, tbNotStarted, suspended), tbPod("a", tbSucceeded)),
			wantFinal: batchv1.JobComplete,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tbCompute(t, tc.in)
			require.Contains(t, tbCondTypes(&p.Status), tc.wantFinal, "plan:\n%s", p)
			assert.Equal(t, tbTime(tbNow), p.Status.StartTime, "Status.StartTime")
		})
	}
}
