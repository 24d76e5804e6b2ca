package groups_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/groups"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

var (
	t0  = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now = t0.Add(time.Minute)
)

func roles(names ...string) []plaingroup.Role {
	out := make([]plaingroup.Role, len(names))
	for i, n := range names {
		out[i] = plaingroup.Role{Name: n, Replicas: 1, Parallelism: 1}
	}
	return out
}

func TestDecide(t *testing.T) {
	succeeded := func(role string) plaingroup.Child {
		return plaingroup.Child{Name: "g-" + role + "-0", Role: role, Outcome: plaingroup.Succeeded, FinishedAt: t0}
	}
	failed := func(role string) plaingroup.Child {
		return plaingroup.Child{Name: "g-" + role + "-0", Role: role, Outcome: plaingroup.Failed, Reason: "BackoffLimitExceeded", FinishedAt: t0}
	}
	running := func(role string) plaingroup.Child { return plaingroup.Child{Name: "g-" + role + "-0", Role: role} }
	tests := []struct {
		name         string
		policy       *plaingroup.FailurePolicy
		success      *plaingroup.SuccessPolicy
		children     []plaingroup.Child
		wantTerminal string
		wantRestarts int32
		wantCond     string // the type of the condition set True, "" for none
		wantEvents   int
	}{
		{name: "running: nothing decided", children: []plaingroup.Child{running("leader"), running("worker")}},
		{name: "all succeeded: Completed", children: []plaingroup.Child{succeeded("leader"), succeeded("worker")},
			wantTerminal: plaingroup.ConditionCompleted, wantCond: plaingroup.ConditionCompleted, wantEvents: 1},
		{name: "a failure without a policy fails the group", children: []plaingroup.Child{failed("leader"), running("worker")},
			wantTerminal: plaingroup.ConditionFailed, wantCond: plaingroup.ConditionFailed, wantEvents: 1},
		{name: "a failure with restarts left restarts it", policy: &plaingroup.FailurePolicy{MaxRestarts: 2},
			children: []plaingroup.Child{failed("leader"), running("worker")}, wantRestarts: 1, wantEvents: 1},
		{name: "failure is decided before success", success: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"worker"}},
			children:     []plaingroup.Child{failed("leader"), succeeded("worker")},
			wantTerminal: plaingroup.ConditionFailed, wantCond: plaingroup.ConditionFailed, wantEvents: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := plaingroup.Compile(tc.policy)
			require.NoError(t, err)
			var spec plaingroup.Spec
			spec.Roles = roles("leader", "worker")
			s := groups.Read(plaingroup.Counters{}, nil, "", now)
			require.NoError(t, s.Decide(m, tc.success, spec.Roles, tc.children))
			if s.TerminalState != tc.wantTerminal || s.Counters.Restarts != tc.wantRestarts || len(s.Events) != tc.wantEvents {
				t.Errorf("Decide: terminal %q restarts %d events %v, want %q %d %d events",
					s.TerminalState, s.Counters.Restarts, s.Events, tc.wantTerminal, tc.wantRestarts, tc.wantEvents)
			}
			got := ""
			if f := s.Finished(); f != nil {
				got = f.Type
			}
			if want := tc.wantCond; got != want {
				t.Errorf("Finished() = %q, want %q", got, want)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	old := []metav1.Condition{
		{Type: plaingroup.ConditionSuspended, Status: metav1.ConditionFalse, Reason: "ResumeJobs", Message: "m", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)},
	}
	tests := []struct {
		name string
		set  []plaingroup.Condition
		want []metav1.Condition
	}{
		{name: "nothing in the state: old as it was", want: old},
		{name: "unchanged: kept with its generation",
			set:  []plaingroup.Condition{{Type: plaingroup.ConditionSuspended, Status: plaingroup.False, Reason: "ResumeJobs", Message: "m"}},
			want: old},
		{name: "changed: the new generation and time",
			set: []plaingroup.Condition{{Type: plaingroup.ConditionSuspended, Status: plaingroup.True, Reason: "SuspendedJobs", Message: "s"}},
			want: []metav1.Condition{{Type: plaingroup.ConditionSuspended, Status: metav1.ConditionTrue, Reason: "SuspendedJobs", Message: "s",
				ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)}}},
		{name: "added: beside the old one",
			set: []plaingroup.Condition{{Type: plaingroup.ConditionCompleted, Status: plaingroup.True, Reason: "AllJobsCompleted", Message: "done"}},
			want: []metav1.Condition{old[0], {Type: plaingroup.ConditionCompleted, Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "done",
				ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []metav1.Condition{old[0]}
			s := groups.Read(plaingroup.Counters{}, in, "", now)
			for _, c := range tc.set {
				s.Set(c)
			}
			if diff := cmp.Diff(tc.want, s.Conditions(in, 2)); diff != "" {
				t.Errorf("Conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(old, in); diff != "" {
				t.Errorf("the conditions read were modified (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinished(t *testing.T) {
	tests := []struct {
		name  string
		conds []metav1.Condition
		want  string
	}{
		{name: "none"},
		{name: "completed", conds: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue}}, want: "Completed"},
		{name: "failed", conds: []metav1.Condition{{Type: "StartupPolicyCompleted", Status: metav1.ConditionTrue}, {Type: "Failed", Status: metav1.ConditionTrue}}, want: "Failed"},
		{name: "completed false", conds: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionFalse}}},
		{name: "restarting only", conds: []metav1.Condition{{Type: "RestartingJobSet", Status: metav1.ConditionTrue}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := groups.Finished(tc.conds); c != nil {
				got = c.Type
			}
			if got != tc.want {
				t.Errorf("Finished(%v) = %q, want %q", tc.conds, got, tc.want)
			}
		})
	}
}

func BenchmarkDecide(b *testing.B) {
	m, err := plaingroup.Compile(&plaingroup.FailurePolicy{MaxRestarts: 3})
	if err != nil {
		b.Fatal(err)
	}
	rs := roles("leader", "worker")
	rs[1].Replicas = 1000
	children := make([]plaingroup.Child, 1001)
	children[0] = plaingroup.Child{Name: "g-leader-0", Role: "leader"}
	for i := 1; i < len(children); i++ {
		children[i] = plaingroup.Child{Name: "g-worker", Role: "worker", Index: int32(i - 1)}
	}
	b.ReportAllocs()
	for b.Loop() {
		s := groups.Read(plaingroup.Counters{}, nil, "", now)
		if err := s.Decide(m, nil, rs, children); err != nil {
			b.Fatal(err)
		}
	}
}
