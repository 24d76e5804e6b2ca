package group_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/group"
)

// Every message that names the group or a child, worded by the zero Terms
// (JobSet's words, byte for byte) and by an owner's own terms; the reasons
// never change.
func TestTermsWordTheMessages(t *testing.T) {
	roles := []group.Role{{Name: "worker", Replicas: 1, Parallelism: 1}}
	failedWorker := []group.Child{{Name: "train-worker", Role: "worker", Outcome: group.Failed, Reason: "BackoffLimitExceeded",
		FinishedAt: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}}
	succeeded := []group.Child{{Name: "train-worker", Role: "worker", Outcome: group.Succeeded}}
	restarting := []group.Condition{{Type: group.ConditionRestarting, Status: group.True}}
	mustCompile := func(p *group.FailurePolicy) *group.Matcher {
		m, err := group.Compile(p)
		require.NoError(t, err)
		return m
	}
	// message returns the message (and the reason) of one decision, worded by
	// terms.
	type message func(terms group.Terms) (reason, msg string)
	decide := func(p *group.FailurePolicy, c group.Counters) message {
		return func(terms group.Terms) (string, string) {
			children := []group.Child{failedWorker[0]}
			children[0].Attempt = c.Restarts // a child of the current attempt
			d, err := mustCompile(p).WithTerms(terms).Decide(children, c)
			require.NoError(t, err)
			require.NotNil(t, d.Condition, "a decision")
			return d.Condition.Reason, d.Condition.Message
		}
	}
	event := func(terms group.Terms) (string, string) {
		d, err := mustCompile(&group.FailurePolicy{MaxRestarts: 1}).WithTerms(terms).Decide(failedWorker, group.Counters{})
		require.NoError(t, err)
		return d.EventReason, d.EventMessage
	}
	restartEnded := func(conds []group.Condition, statuses []group.RoleStatus, suspended bool) message {
		return func(terms group.Terms) (string, string) {
			c := terms.RestartEnded(append(restarting, conds...), roles, statuses, suspended)
			require.NotNil(t, c)
			return c.Reason, c.Message
		}
	}
	suspend := func(on bool) message {
		return func(terms group.Terms) (string, string) {
			c := terms.Suspend(on, roles, succeeded, group.Counters{}, nil).Condition
			return c.Reason, c.Message
		}
	}
	owner := group.Terms{Group: "TrainingJob", Child: "role", Children: "roles", ByRole: true}
	tests := []struct {
		name       string
		message    message
		wantReason string
		wantJobSet string
		wantOwner  string
	}{
		{
			name: "completed", wantReason: "AllJobsCompleted",
			message: func(terms group.Terms) (string, string) {
				s := terms.Succeed(nil, roles, succeeded, group.Counters{})
				require.True(t, s.Completed)
				return s.Condition.Reason, s.Condition.Message
			},
			wantJobSet: "jobset completed successfully",
			wantOwner:  "TrainingJob completed successfully",
		},
		{
			name: "failed, no failure policy", wantReason: "FailedJobs", message: decide(nil, group.Counters{}),
			wantJobSet: "jobset failed due to one or more job failures (first failed job: train-worker)",
			wantOwner:  "TrainingJob failed due to one or more role failures (first failed role: worker)",
		},
		{
			name: "restart budget spent", wantReason: "ReachedMaxRestarts",
			message:    decide(&group.FailurePolicy{MaxRestarts: 1}, group.Counters{Restarts: 1, RestartsCountTowardsMax: 1}),
			wantJobSet: "jobset failed due to reaching max number of restarts (first failed job: train-worker)",
			wantOwner:  "TrainingJob failed due to reaching max number of restarts (first failed role: worker)",
		},
		{
			name: "FailJobSet rule", wantReason: "FailJobSetFailurePolicyAction",
			message:    decide(&group.FailurePolicy{Rules: []group.Rule{{Name: "r", Action: group.FailJobSet}}}, group.Counters{}),
			wantJobSet: "applying FailJobSet failure policy action (first failed job: train-worker)",
			wantOwner:  "applying FailJobSet failure policy action (first failed role: worker)",
		},
		{
			name: "restart event", wantReason: "RestartJobSetFailurePolicyAction", message: event,
			wantJobSet: "applying RestartJobSet failure policy action (first failed job: train-worker)",
			wantOwner:  "applying RestartJobSet failure policy action (first failed role: worker)",
		},
		{
			name: "suspended", wantReason: "SuspendedJobs", message: suspend(true),
			wantJobSet: "jobset is suspended", wantOwner: "TrainingJob is suspended",
		},
		{
			name: "resumed", wantReason: "ResumeJobs", message: suspend(false),
			wantJobSet: "jobset is resumed", wantOwner: "TrainingJob is resumed",
		},
		{
			name: "restart ended: failed", wantReason: "JobSetFailed",
			message:    restartEnded([]group.Condition{{Type: group.ConditionFailed, Status: group.True}}, nil, false),
			wantJobSet: "jobset failed", wantOwner: "TrainingJob failed",
		},
		{
			name: "restart ended: completed", wantReason: "JobSetCompleted",
			message:    restartEnded([]group.Condition{{Type: group.ConditionCompleted, Status: group.True}}, nil, false),
			wantJobSet: "jobset completed", wantOwner: "TrainingJob completed",
		},
		{
			name: "restart ended: suspended", wantReason: "JobSetSuspended", message: restartEnded(nil, nil, true),
			wantJobSet: "jobset is suspended", wantOwner: "TrainingJob is suspended",
		},
		{
			name: "restart ended: every role started", wantReason: "JobsReady",
			message:    restartEnded(nil, []group.RoleStatus{{Name: "worker", Ready: 1}}, false),
			wantJobSet: "all jobs are ready", wantOwner: "all roles are ready",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reason, msg := tc.message(group.Terms{})
			assert.Equal(t, tc.wantReason, reason, "reason")
			assert.Equal(t, tc.wantJobSet, msg, "in JobSet's words")
			reason, msg = tc.message(owner)
			assert.Equal(t, tc.wantReason, reason, "the reason never changes")
			assert.Equal(t, tc.wantOwner, msg, "in the owner's words")
		})
	}
}

// The package functions are the zero Terms' methods: JobSet's words.
func TestTermsZeroIsJobSet(t *testing.T) {
	roles := []group.Role{{Name: "worker", Replicas: 1, Parallelism: 1}}
	done := []group.Child{{Name: "train-worker", Role: "worker", Outcome: group.Succeeded}}
	assert.Equal(t, group.Terms{}.Succeed(nil, roles, done, group.Counters{}), group.Succeed(nil, roles, done, group.Counters{}))
	assert.Equal(t, group.Terms{}.Suspend(true, roles, done, group.Counters{}, nil), group.Suspend(true, roles, done, group.Counters{}, nil))
	conds := []group.Condition{{Type: group.ConditionRestarting, Status: group.True}}
	assert.Equal(t, group.Terms{}.RestartEnded(conds, roles, nil, true), group.RestartEnded(conds, roles, nil, true))
	var m *group.Matcher
	failed := []group.Child{{Name: "train-worker", Role: "worker", Outcome: group.Failed}}
	want, err := m.Decide(failed, group.Counters{})
	require.NoError(t, err)
	got, err := m.WithTerms(group.Terms{}).Decide(failed, group.Counters{})
	require.NoError(t, err)
	assert.Equal(t, want, got, "a nil Matcher with terms decides as a nil one")
}

// An owner of roles words its messages with its kind and its roles.
func ExampleTerms() {
	terms := group.Terms{Group: "TrainingJob", Child: "role", Children: "roles", ByRole: true}
	failed := []group.Child{{Name: "train-worker", Role: "worker", Outcome: group.Failed}}
	m, _ := group.Compile(nil)
	f, _ := m.WithTerms(terms).Decide(failed, group.Counters{})
	fmt.Println(f.Condition.Reason + ": " + f.Condition.Message)
	j, _ := m.Decide(failed, group.Counters{})
	fmt.Println(j.Condition.Reason + ": " + j.Condition.Message)
	// Output:
	// FailedJobs: TrainingJob failed due to one or more role failures (first failed role: worker)
	// FailedJobs: jobset failed due to one or more job failures (first failed job: train-worker)
}
