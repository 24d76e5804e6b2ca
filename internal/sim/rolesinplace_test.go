package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The in-place checks catch what they are for: a pod working on one attempt
// beside one on another, attempts going back, a restart counted twice (the
// current attempt moving by two), the previous attempt passing the current.
func TestInPlaceChecks(t *testing.T) {
	at := func(n int32) *int32 { return &n }
	running := func(uid string, restarts int32) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: restarts}}}}
	}
	stopping := running("c", 0)
	stopping.DeletionTimestamp = &metav1.Time{}
	cases := []struct {
		name    string
		state   map[types.UID]*agentState
		pods    []*corev1.Pod
		last    plaingroup.InPlaceAttempts
		status  plaingroup.InPlaceAttempts
		leaving string // the pod leaving the group's size
		want    Invariant
	}{
		{name: "every worker on one attempt",
			state: map[types.UID]*agentState{"a": {attempt: 1, working: true}, "b": {attempt: 1, working: true}},
			pods:  []*corev1.Pod{running("a", 0), running("b", 0)}},
		{name: "two attempts working", want: InvInPlaceBarrier,
			state: map[types.UID]*agentState{"a": {attempt: 1, working: true}, "b": {attempt: 2, working: true}},
			pods:  []*corev1.Pod{running("a", 0), running("b", 0)}},
		{name: "a pod whose container restarted works no more",
			state: map[types.UID]*agentState{"a": {attempt: 1, working: true}, "b": {attempt: 2, working: true}},
			pods:  []*corev1.Pod{running("a", 1), running("b", 0)}},
		{name: "a pod being deleted works no more",
			state: map[types.UID]*agentState{"c": {attempt: 1, working: true}, "b": {attempt: 2, working: true}},
			pods:  []*corev1.Pod{stopping, running("b", 0)}},
		{name: "a pod leaving the group's size works on beside the new attempt", leaving: "b",
			state: map[types.UID]*agentState{"a": {attempt: 1, working: true}, "b": {attempt: 0, working: true}},
			pods:  []*corev1.Pod{running("a", 0), running("b", 0)}},
		{name: "a waiting pod beside a working one",
			state: map[types.UID]*agentState{"a": {attempt: 1, working: true}, "b": {attempt: 2}},
			pods:  []*corev1.Pod{running("a", 0), running("b", 0)}},
		{name: "the current attempt moves by one", last: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(0)},
			status: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(1)}},
		{name: "the first current attempt", status: plaingroup.InPlaceAttempts{Current: at(0)}},
		{name: "a restart counted twice", want: InvInPlaceAttempts, last: plaingroup.InPlaceAttempts{Current: at(0)},
			status: plaingroup.InPlaceAttempts{Previous: at(1), Current: at(2)}},
		{name: "current goes back", want: InvInPlaceAttempts, last: plaingroup.InPlaceAttempts{Current: at(2)},
			status: plaingroup.InPlaceAttempts{Current: at(1)}},
		{name: "previous goes back", want: InvInPlaceAttempts, last: plaingroup.InPlaceAttempts{Previous: at(1), Current: at(1)},
			status: plaingroup.InPlaceAttempts{Previous: at(0), Current: at(1)}},
		{name: "previous passes current", want: InvInPlaceAttempts, last: plaingroup.InPlaceAttempts{Current: at(1)},
			status: plaingroup.InPlaceAttempts{Previous: at(2), Current: at(1)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rw := &rolesWorld{}
			a := &inPlaceAgents{violate: rw.violate, state: tc.state, last: tc.last,
				leaving: func(p *corev1.Pod) bool { return p.Name == tc.leaving }}
			if tc.pods != nil {
				a.checkBarrier(tc.pods)
			} else {
				a.checkStatus(tc.status)
			}
			if tc.want == "" {
				assert.Empty(t, rw.violations)
				return
			}
			require.Len(t, rw.violations, 1)
			assert.Equal(t, tc.want, rw.violations[0].Invariant, "%s", rw.violations[0])
		})
	}
}

// Owners restarted in place under faults: a third of the seeds, each with 0
// violations; some restart in place (the current attempt above 0) and still
// complete; none restarts by recreation (a pod failure is replaced alone, the
// roles never fail), so status.restarts stays 0.
func TestRunRolesInPlace(t *testing.T) {
	seeds, restarted, completed := 0, 0, 0
	for seed := range uint64(90) {
		if inPlaceSeed(seed) == nil {
			continue
		}
		seeds++
		res, err := RunRoles(RolesConfig{Seed: seed, FaultRate: 0.1})
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %s", seed, res.Summary())
		assert.Contains(t, res.Owner, "InPlaceRestart")
		assert.Zero(t, res.Status.Restarts, "seed %d: %s", seed, res.Summary())
		if ptr.Deref(res.Status.InPlace.Current, 0) > 0 {
			restarted++
			if res.Status.TerminalState == plaingroup.ConditionCompleted {
				completed++
			}
		}
	}
	t.Logf("%d seeds restarted in place, %d of them restarted at least once, %d of those completed", seeds, restarted, completed)
	assert.Greater(t, seeds, 15)
	assert.Greater(t, restarted, seeds/2)
	assert.Greater(t, completed, restarted/3)
}

// Groups of child Jobs restarted in place under faults: a third of the seeds,
// each with 0 violations; most restart in place at least once and complete;
// none restarts by recreation.
func TestRunChildJobsInPlace(t *testing.T) {
	seeds, restarted, completed := 0, 0, 0
	for seed := range uint64(90) {
		if inPlaceGroupSeed(seed) == nil {
			continue
		}
		seeds++
		res, err := RunChildJobs(ChildJobsConfig{Seed: seed, FaultRate: 0.1})
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %s", seed, res.Summary())
		assert.Contains(t, res.Group, "InPlaceRestart")
		assert.Zero(t, res.Status.Restarts, "seed %d: %s", seed, res.Summary())
		if ptr.Deref(res.Status.CurrentInPlaceRestartAttempt, 0) > 0 {
			restarted++
			if res.Status.TerminalState == plaingroup.ConditionCompleted {
				completed++
			}
		}
	}
	t.Logf("%d groups restarted in place, %d of them restarted at least once, %d of those completed", seeds, restarted, completed)
	assert.Greater(t, seeds, 15)
	assert.Greater(t, restarted, seeds/2)
	assert.Greater(t, completed, restarted/3)
}
