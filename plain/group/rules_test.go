package group_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/group"
)

func ptr[T any](v T) *T { return &v }

func succeeded(name, role string, index int32) group.Child {
	return group.Child{Name: name, Role: role, Index: index, Outcome: group.Succeeded}
}

var leaderWorkers = []group.Role{
	{Name: "leader", Replicas: 1, Parallelism: 1},
	{Name: "workers", Replicas: 3, Parallelism: 4, Completions: ptr[int32](4)},
}

// The cases cite jobset-behaviour.md, "Rules: Success policy".
func TestSucceed(t *testing.T) {
	cases := []struct {
		name       string
		policy     *group.SuccessPolicy
		children   []group.Child
		counters   group.Counters
		wantDone   bool
		wantNeeded int64
		wantCount  int64
	}{
		{name: "All by default: the sum of every role's replicas", children: []group.Child{
			succeeded("l", "leader", 0), succeeded("w0", "workers", 0), succeeded("w1", "workers", 1)},
			wantNeeded: 4, wantCount: 3},
		{name: "All, every child succeeded", children: []group.Child{
			succeeded("l", "leader", 0), succeeded("w0", "workers", 0), succeeded("w1", "workers", 1), succeeded("w2", "workers", 2)},
			wantDone: true, wantNeeded: 4, wantCount: 4},
		{name: "All over a target role counts that role only", policy: &group.SuccessPolicy{Operator: group.All, TargetReplicatedJobs: []string{"leader"}},
			children: []group.Child{succeeded("l", "leader", 0), running("w0", "workers", 0)}, wantDone: true, wantNeeded: 1, wantCount: 1},
		{name: "Any over a target role: one success of that role", policy: &group.SuccessPolicy{Operator: group.Any, TargetReplicatedJobs: []string{"leader"}},
			children: []group.Child{succeeded("w0", "workers", 0)}, wantNeeded: 1},
		{name: "Any with no targets: any child", policy: &group.SuccessPolicy{Operator: group.Any},
			children: []group.Child{running("l", "leader", 0), succeeded("w2", "workers", 2)}, wantDone: true, wantNeeded: 1, wantCount: 1},
		{name: "checked only when no child has failed", policy: &group.SuccessPolicy{Operator: group.Any},
			children: []group.Child{succeeded("l", "leader", 0), {Name: "w", Role: "workers", Outcome: group.Failed}}, wantNeeded: 1},
		{name: "children of an old attempt do not count", policy: &group.SuccessPolicy{Operator: group.Any},
			children: []group.Child{succeeded("l", "leader", 0)}, counters: group.Counters{Restarts: 1}, wantNeeded: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := group.Succeed(tc.policy, leaderWorkers, tc.children, tc.counters)
			assert.Equal(t, tc.wantDone, s.Completed, "Completed")
			assert.Equal(t, tc.wantNeeded, s.Needed, "Needed")
			assert.Equal(t, tc.wantCount, s.Succeeded, "Succeeded")
			if tc.wantDone {
				require.NotNil(t, s.Condition)
				assert.Equal(t, group.Condition{Type: "Completed", Status: group.True, Reason: "AllJobsCompleted", Message: "jobset completed successfully"}, *s.Condition)
				assert.Equal(t, "Completed", s.TerminalState)
			} else {
				assert.Nil(t, s.Condition)
				assert.Empty(t, s.TerminalState)
			}
		})
	}
}

// The cases cite jobset-behaviour.md, "Rules: Startup InOrder" and "dependsOn".
func TestMayStart(t *testing.T) {
	three := []group.Role{
		{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}, {Name: "c", Replicas: 1},
	}
	deps := []group.Role{
		{Name: "a", Replicas: 2},
		{Name: "b", Replicas: 1, DependsOn: []group.Dependency{{Name: "a", Status: group.DependsOnReady}}},
		{Name: "c", Replicas: 1, DependsOn: []group.Dependency{{Name: "a", Status: group.DependsOnComplete}}},
	}
	cases := []struct {
		name     string
		order    group.StartupOrder
		roles    []group.Role
		statuses []group.RoleStatus
		want     []bool
		wantDone *bool
	}{
		{name: "AnyOrder without dependencies: all at once", roles: three, want: []bool{true, true, true}},
		{name: "InOrder: the first role first", order: group.InOrder, roles: three, want: []bool{true, false, false}, wantDone: ptr(false)},
		{name: "InOrder: active but not ready does not count as started", order: group.InOrder, roles: three,
			statuses: []group.RoleStatus{{Name: "a", Active: 1}}, want: []bool{true, false, false}, wantDone: ptr(false)},
		{name: "InOrder: ready+succeeded+failed == replicas starts the next", order: group.InOrder, roles: three,
			statuses: []group.RoleStatus{{Name: "a", Failed: 1}, {Name: "b", Ready: 1, Succeeded: 0}}, want: []bool{true, true, false}, wantDone: ptr(false)},
		{name: "InOrder: every role started", order: group.InOrder, roles: three,
			statuses: []group.RoleStatus{{Name: "a", Ready: 1}, {Name: "b", Ready: 1, Succeeded: 1}, {Name: "c", Succeeded: 1}},
			want:     []bool{true, true, true}, wantDone: ptr(true)},
		{name: "dependsOn: no status entry yet", roles: deps, want: []bool{true, false, false}},
		{name: "dependsOn Ready counts failed children as ready; Complete needs every success", roles: deps,
			statuses: []group.RoleStatus{{Name: "a", Ready: 1, Failed: 1}}, want: []bool{true, true, false}},
		{name: "dependsOn Complete met", roles: deps, statuses: []group.RoleStatus{{Name: "a", Succeeded: 2}}, want: []bool{true, true, true}},
		{name: "dependency on an unknown role is never met",
			roles:    []group.Role{{Name: "a"}, {Name: "b", DependsOn: []group.Dependency{{Name: "zz", Status: group.DependsOnReady}}}},
			statuses: []group.RoleStatus{{Name: "zz"}}, want: []bool{true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := group.MayStart(tc.order, tc.roles, tc.statuses)
			assert.Equal(t, tc.want, st.Allowed)
			if tc.wantDone == nil {
				assert.Nil(t, st.Conditions)
				return
			}
			var conds []group.Condition
			for _, c := range st.Conditions {
				conds, _ = group.SetCondition(conds, c, t0)
			}
			assert.Equal(t, *tc.wantDone, isTrue(conds, group.ConditionStartupPolicyCompleted), "StartupPolicyCompleted")
			assert.Equal(t, !*tc.wantDone, isTrue(conds, group.ConditionStartupPolicyInProgress), "StartupPolicyInProgress")
		})
	}
}

func TestStartupConditionsExcludeEachOther(t *testing.T) {
	roles := []group.Role{{Name: "a", Replicas: 1}}
	var conds []group.Condition
	for _, c := range group.MayStart(group.InOrder, roles, nil).Conditions {
		conds, _ = group.SetCondition(conds, c, t0)
	}
	for _, c := range group.MayStart(group.InOrder, roles, []group.RoleStatus{{Name: "a", Ready: 1}}).Conditions {
		conds, _ = group.SetCondition(conds, c, t0.Add(time.Minute))
	}
	want := []group.Condition{
		{Type: "StartupPolicyInProgress", Status: group.False, Reason: "InOrderStartupPolicyInProgress", Message: "in order startup policy is in progress", LastTransitionTime: t0.Add(time.Minute)},
		{Type: "StartupPolicyCompleted", Status: group.True, Reason: "InOrderStartupPolicyCompleted", Message: "in order startup policy has completed", LastTransitionTime: t0.Add(time.Minute)},
	}
	if diff := cmp.Diff(want, conds); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

// The cases cite jobset-behaviour.md, "Rules: Status".
func TestStatuses(t *testing.T) {
	children := []group.Child{
		{Name: "l", Role: "leader", Index: 0, Ready: 1, Active: 1},                            // ready: 1 >= min(1, nil→1)
		{Name: "w0", Role: "workers", Index: 0, Ready: 3, Succeeded: 1, Active: 3},            // ready: 3+1 >= 4
		{Name: "w1", Role: "workers", Index: 1, Ready: 3, Active: 4, Deleting: true},          // not ready, not active (deleting)
		{Name: "w2", Role: "workers", Index: 2, Suspended: true},                              // suspended
		{Name: "w2-old", Role: "workers", Index: 2, Outcome: group.Failed, JobAttempt: -1},    // old attempt: left out
		{Name: "x", Role: "unknown", Outcome: group.Succeeded},                                // unknown role: left out
		{Name: "w3", Role: "workers", Index: 3, Outcome: group.Succeeded, Ready: 0},           // finished: succeeded only
		{Name: "w4", Role: "workers", Index: 4, Outcome: group.Failed, Ready: 4, Active: 4},   // finished: failed only
		{Name: "l1", Role: "leader", Index: 1, Outcome: group.Succeeded, Ready: 1, Active: 1}, // counted as succeeded
	}
	c := group.Counters{Jobs: map[string]group.RoleRestarts{"workers": {Restarts: []int32{0, 2}, CountTowardsMax: []int32{0, 1, 0, 0, 0, 0}}}}
	got := group.Statuses(leaderWorkers, children, c)
	want := []group.RoleStatus{
		{Name: "leader", Ready: 1, Succeeded: 1, Active: 1},
		{Name: "workers", Ready: 1, Succeeded: 1, Failed: 1, Active: 1, Suspended: 1,
			JobRestarts: []int32{0, 2, 0}, JobRestartsCountTowardsMax: []int32{0, 1, 0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Statuses (-want +got):\n%s", diff)
	}
}

func TestExpectedPods(t *testing.T) {
	cases := []struct {
		name string
		role group.Role
		want int32
	}{
		{name: "completions unset: parallelism", role: group.Role{Parallelism: 3}, want: 3},
		{name: "completions below parallelism", role: group.Role{Parallelism: 3, Completions: ptr[int32](2)}, want: 2},
		{name: "parallelism below completions", role: group.Role{Parallelism: 2, Completions: ptr[int32](8)}, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.role.ExpectedPods())
		})
	}
}

// The cases cite jobset-behaviour.md, "Rules: Conditions".
func TestSetCondition(t *testing.T) {
	t1 := t0.Add(time.Hour)
	suspended := group.Condition{Type: "Suspended", Status: group.True, Reason: "SuspendedJobs", Message: "jobset is suspended", LastTransitionTime: t0}
	cases := []struct {
		name        string
		conds       []group.Condition
		set         group.Condition
		want        []group.Condition
		wantChanged bool
	}{
		{name: "identical condition is a no-op", conds: []group.Condition{suspended},
			set:  group.Condition{Type: "Suspended", Status: group.True, Reason: "SuspendedJobs", Message: "jobset is suspended"},
			want: []group.Condition{suspended}},
		{name: "same type and status, new message: updated in place, time kept", conds: []group.Condition{suspended},
			set:  group.Condition{Type: "Suspended", Status: group.True, Reason: "SuspendedJobs", Message: "by the queue"},
			want: []group.Condition{{Type: "Suspended", Status: group.True, Reason: "SuspendedJobs", Message: "by the queue", LastTransitionTime: t0}}, wantChanged: true},
		{name: "new status: replaced with a new time", conds: []group.Condition{suspended},
			set:  group.Condition{Type: "Suspended", Status: group.False, Reason: "ResumeJobs", Message: "jobset is resumed"},
			want: []group.Condition{{Type: "Suspended", Status: group.False, Reason: "ResumeJobs", Message: "jobset is resumed", LastTransitionTime: t1}}, wantChanged: true},
		{name: "a new condition is added when True", conds: []group.Condition{suspended},
			set:  group.Condition{Type: "Completed", Status: group.True, Reason: "AllJobsCompleted"},
			want: []group.Condition{suspended, {Type: "Completed", Status: group.True, Reason: "AllJobsCompleted", LastTransitionTime: t1}}, wantChanged: true},
		{name: "a new False condition is not added", conds: []group.Condition{suspended},
			set:  group.Condition{Type: "RestartingJobSet", Status: group.False, Reason: "JobsReady"},
			want: []group.Condition{suspended}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]group.Condition(nil), tc.conds...)
			got, changed := group.SetCondition(tc.conds, tc.set, t1)
			assert.Equal(t, tc.wantChanged, changed, "changed")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetCondition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.conds); diff != "" {
				t.Errorf("SetCondition modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

// The cases cite jobset-behaviour.md, "Rules: TTL".
func TestTTL(t *testing.T) {
	done := []group.Condition{{Type: "Completed", Status: group.True, LastTransitionTime: t0}}
	failed := []group.Condition{{Type: "Completed", Status: group.False}, {Type: "Failed", Status: group.True, LastTransitionTime: t0}}
	cases := []struct {
		name     string
		ttl      *int32
		conds    []group.Condition
		deleting bool
		now      time.Time
		want     group.Expiry
		wantErr  error
	}{
		{name: "unset: never deleted", conds: done, now: t0.Add(time.Hour)},
		{name: "time left: look again after it", ttl: ptr[int32](60), conds: done, now: t0.Add(20 * time.Second),
			want: group.Expiry{At: t0.Add(time.Minute), Left: 40 * time.Second}},
		{name: "no time left: expired", ttl: ptr[int32](60), conds: failed, now: t0.Add(time.Minute),
			want: group.Expiry{Expired: true, At: t0.Add(time.Minute)}},
		{name: "zero: eligible right after finishing", ttl: ptr[int32](0), conds: done, now: t0,
			want: group.Expiry{Expired: true, At: t0}},
		{name: "already being deleted is never expired", ttl: ptr[int32](0), conds: done, deleting: true, now: t0.Add(time.Hour)},
		{name: "unfinished group is an error", ttl: ptr[int32](10), conds: []group.Condition{{Type: "Completed", Status: group.False}}, now: t0, wantErr: group.ErrNotFinished},
		{name: "negative TTL is an error", ttl: ptr[int32](-1), conds: done, now: t0, wantErr: group.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := group.TTL(tc.ttl, tc.conds, tc.deleting, tc.now)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSuspend(t *testing.T) {
	roles := []group.Role{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 1}}
	children := []group.Child{
		{Name: "a0", Role: "a"},
		{Name: "b0", Role: "b", Suspended: true},
		{Name: "a-done", Role: "a", Outcome: group.Succeeded},
		{Name: "a0-old", Role: "a", Attempt: -1},
		{Name: "a1", Role: "a", Index: 1, Suspended: true},
	}
	s := group.Suspend(true, roles, children, group.Counters{}, nil)
	assert.Equal(t, []int{0}, s.Suspend, "suspend the running, unsuspended children")
	assert.Empty(t, s.Resume)
	assert.Equal(t, group.Condition{Type: "Suspended", Status: group.True, Reason: "SuspendedJobs", Message: "jobset is suspended"}, s.Condition)

	s = group.Suspend(false, roles, children, group.Counters{}, []bool{true, false})
	assert.Equal(t, []int{4}, s.Resume, "resume only the roles that may start")
	assert.Equal(t, group.Condition{Type: "Suspended", Status: group.False, Reason: "ResumeJobs", Message: "jobset is resumed"}, s.Condition)

	s = group.Suspend(false, roles, children, group.Counters{}, nil)
	assert.Equal(t, []int{1, 4}, s.Resume)
}

func TestRestartEnded(t *testing.T) {
	restarting := group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "DefaultFailurePolicy"}
	roles := []group.Role{{Name: "a", Replicas: 2}}
	cases := []struct {
		name       string
		conds      []group.Condition
		statuses   []group.RoleStatus
		suspended  bool
		wantReason string
	}{
		{name: "no restart in progress", statuses: []group.RoleStatus{{Name: "a", Ready: 2}}},
		{name: "children not all started yet", conds: []group.Condition{restarting}, statuses: []group.RoleStatus{{Name: "a", Ready: 1}}},
		{name: "every child ready again", conds: []group.Condition{restarting}, statuses: []group.RoleStatus{{Name: "a", Ready: 1, Succeeded: 1}}, wantReason: "JobsReady"},
		{name: "failed", conds: []group.Condition{restarting, {Type: "Failed", Status: group.True}}, wantReason: "JobSetFailed"},
		{name: "completed", conds: []group.Condition{restarting, {Type: "Completed", Status: group.True}}, wantReason: "JobSetCompleted"},
		{name: "suspended", conds: []group.Condition{restarting}, suspended: true, wantReason: "JobSetSuspended"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := group.RestartEnded(tc.conds, roles, tc.statuses, tc.suspended)
			if tc.wantReason == "" {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, group.False, got.Status)
			assert.Equal(t, tc.wantReason, got.Reason)
		})
	}
}

// isTrue reports whether conds holds a condition of type t with status True.
func isTrue(conds []group.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == group.True
		}
	}
	return false
}
