package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// worker is a status of the worker role: attempt, the attempt's failed counter
// and failed ledger, the total failed.
func worker(attempt, failed int32, ledger []types.UID, total int32) ownedpods.Status {
	return ownedpods.Status{Restarts: attempt, Roles: []ownedpods.RoleStatus{{
		Name: "worker", Attempt: attempt, Failed: total,
		Job: batchv1.JobStatus{Failed: failed, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Failed: ledger}},
	}}}
}

// The roles checker catches each way a count can go wrong, and accepts the
// exact one: a status sequence is checked step by step, as after each sync.
func TestRolesCheckStatus(t *testing.T) {
	failedPod := func(uid types.UID, attempt string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "train-worker-0-" + string(uid), UID: uid, Labels: map[string]string{
				plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: attempt}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed},
		}
	}
	tests := []struct {
		name  string
		steps []ownedpods.Status
		want  Invariant // "" for none
	}{
		{name: "exact: recorded, then counted once", steps: []ownedpods.Status{
			worker(0, 0, nil, 0), worker(0, 0, []types.UID{"a"}, 0), worker(0, 1, nil, 1)}},
		{name: "counted without the ledger", steps: []ownedpods.Status{
			worker(0, 0, nil, 0), worker(0, 1, nil, 1)}, want: InvCount},
		{name: "total not grown with the attempt's counter", steps: []ownedpods.Status{
			worker(0, 0, []types.UID{"a"}, 0), worker(0, 1, nil, 0)}, want: InvCount},
		{name: "recorded again after it was counted", steps: []ownedpods.Status{
			worker(0, 0, []types.UID{"a"}, 0), worker(0, 1, nil, 1), worker(0, 1, []types.UID{"a"}, 1)}, want: InvCountedTwice},
		{name: "a pod of the old attempt recorded", steps: []ownedpods.Status{
			worker(1, 0, nil, 2), worker(1, 0, []types.UID{"old"}, 2)}, want: InvOldAttemptCounted},
		{name: "advanced with a pod recorded and not counted", steps: []ownedpods.Status{
			worker(0, 0, []types.UID{"a"}, 0), worker(1, 0, nil, 0)}, want: InvCount},
		{name: "advance counts the last entry in the totals", steps: []ownedpods.Status{
			worker(0, 0, []types.UID{"a"}, 0), worker(1, 0, nil, 1)}},
		{name: "advanced with the old attempt's counters", steps: []ownedpods.Status{
			worker(0, 1, nil, 1), worker(1, 1, nil, 1)}, want: InvOldAttemptCounted},
		{name: "advance keeps the totals", steps: []ownedpods.Status{
			worker(0, 0, []types.UID{"a"}, 0), worker(0, 1, nil, 1), worker(1, 0, nil, 1)}},
		{name: "a total goes back", steps: []ownedpods.Status{
			worker(0, 1, nil, 1), worker(0, 1, nil, 0)}, want: InvBackwards},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rw := &rolesWorld{}
			m := &rolesModel{rw: rw, counted: map[types.UID]string{}, total: map[string][2]int32{}, pods: map[types.UID]*corev1.Pod{
				"a": failedPod("a", "0"), "old": failedPod("old", "0"),
			}}
			for i := 1; i < len(tc.steps) && !rw.stopped; i++ {
				m.checkStatus(&tc.steps[i-1], &tc.steps[i])
			}
			if tc.want == "" {
				assert.Empty(t, rw.violations)
				return
			}
			if assert.Len(t, rw.violations, 1) {
				assert.Equal(t, tc.want, rw.violations[0].Invariant, rw.violations[0].Message)
			}
		})
	}
}

// A finished owner whose pods no longer run must show it in every role's
// status; while a pod runs or keeps the finalizer, or before the owner
// finished, the status may still lag.
func TestRolesCheckStaleStatus(t *testing.T) {
	pod := func(phase corev1.PodPhase, deleting, finalizer bool) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "train-worker-0", Labels: map[string]string{
				plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: "0"}},
			Status: corev1.PodStatus{Phase: phase},
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		if finalizer {
			p.Finalizers = []string{RolesKind.Finalizer}
		}
		return p
	}
	status := func(state string, active, ready, terminating int32) *ownedpods.Status {
		return &ownedpods.Status{TerminalState: state, Roles: []ownedpods.RoleStatus{{
			Name: "worker", Job: batchv1.JobStatus{Active: active, Ready: &ready, Terminating: &terminating}}}}
	}
	tests := []struct {
		name      string
		status    *ownedpods.Status
		pods      []*corev1.Pod
		wantStale bool
	}{
		{name: "finished, workers gone, shown gone", status: status("Completed", 0, 0, 0)},
		{name: "finished, workers gone, shown active (issue 33)", status: status("Completed", 2, 2, 0), wantStale: true},
		{name: "finished, workers gone, shown terminating", status: status("Completed", 0, 0, 2), wantStale: true},
		{name: "finished, a worker terminating, shown so", status: status("Completed", 0, 0, 1),
			pods: []*corev1.Pod{pod(corev1.PodRunning, true, false)}},
		{name: "finished, a worker terminating, shown active", status: status("Failed", 1, 1, 0),
			pods: []*corev1.Pod{pod(corev1.PodRunning, true, false)}, wantStale: true},
		{name: "finished, a failed worker left, shown gone", status: status("Failed", 0, 0, 0),
			pods: []*corev1.Pod{pod(corev1.PodFailed, false, false)}},
		{name: "not settled: a worker runs", status: status("Completed", 0, 0, 0),
			pods: []*corev1.Pod{pod(corev1.PodRunning, false, false)}},
		{name: "not settled: a worker keeps the finalizer", status: status("Completed", 1, 0, 0),
			pods: []*corev1.Pod{pod(corev1.PodFailed, false, true)}},
		{name: "not finished", status: status("", 2, 2, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := staleStatus(tc.status, tc.pods)
			assert.Equal(t, tc.wantStale, got != "", "staleStatus = %q", got)
		})
	}
}
