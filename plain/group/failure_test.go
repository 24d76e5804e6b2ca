package group_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/group"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// failedChild is a failed child of the current attempt, finished at t0+sec.
func failedChild(name, role string, index int32, reason, msg string, sec int) group.Child {
	return group.Child{Name: name, Role: role, Index: index, Outcome: group.Failed, Reason: reason, Message: msg,
		FinishedAt: t0.Add(time.Duration(sec) * time.Second)}
}

func running(name, role string, index int32) group.Child {
	return group.Child{Name: name, Role: role, Index: index, Active: 1}
}

func mustCompile(t *testing.T, p *group.FailurePolicy) *group.Matcher {
	t.Helper()
	m, err := group.Compile(p)
	require.NoError(t, err)
	return m
}

// The cases cite jobset-behaviour.md, "Rules: Failure policy" and "Restart counting".
func TestDecide(t *testing.T) {
	workerBackoff := failedChild("js-workers-1", "workers", 1, "BackoffLimitExceeded", "Job has reached the specified backoff limit", 20)
	leaderPFP := failedChild("js-leader-0", "leader", 0, "PodFailurePolicy", "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0", 30)
	earlyWorker := failedChild("js-workers-0", "workers", 0, "DeadlineExceeded", "Job was active longer than specified deadline", 10)
	cases := []struct {
		name       string
		policy     *group.FailurePolicy
		children   []group.Child
		counters   group.Counters
		wantEffect group.Effect
		wantAction group.Action
		wantRule   int
		wantChild  int
		wantCount  group.Counters
		wantCond   *group.Condition
	}{
		{
			name:       "nothing happens unless a current child failed",
			policy:     &group.FailurePolicy{MaxRestarts: 3},
			children:   []group.Child{running("js-workers-0", "workers", 0), {Name: "old", Role: "workers", Outcome: group.Failed, Attempt: 0}},
			counters:   group.Counters{Restarts: 1},
			wantEffect: group.NoFailure, wantRule: -1, wantChild: -1,
			wantCount: group.Counters{Restarts: 1},
		},
		{
			name:       "no failure policy: the group fails at once naming the earliest-failed child",
			children:   []group.Child{workerBackoff, earlyWorker},
			wantEffect: group.Fail, wantRule: -1, wantChild: 1,
			wantCond: &group.Condition{Type: "Failed", Status: group.True, Reason: "FailedJobs",
				Message: "jobset failed due to one or more job failures (first failed job: js-workers-0)"},
		},
		{
			name:       "no rule matches: the default RestartJobSet on the earliest-failed child, counted",
			policy:     &group.FailurePolicy{MaxRestarts: 2, Rules: []group.Rule{{Name: "leaderOnly", Action: group.FailJobSet, TargetReplicatedJobs: []string{"leader"}}}},
			children:   []group.Child{workerBackoff, earlyWorker},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSet, wantRule: -1, wantChild: 1,
			wantCount: group.Counters{Restarts: 1, RestartsCountTowardsMax: 1},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "DefaultFailurePolicy",
				Message: "applying RestartJobSet failure policy action (first failed job: js-workers-0)"},
		},
		{
			name: "rules in order: the first rule with a match wins even if a later one matches an earlier child",
			policy: &group.FailurePolicy{MaxRestarts: 5, Rules: []group.Rule{
				{Name: "pfp", Action: group.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}},
				{Name: "any", Action: group.RestartJobSetAndIgnoreMaxRestarts},
			}},
			children:   []group.Child{earlyWorker, leaderPFP},
			wantEffect: group.Fail, wantAction: group.FailJobSet, wantRule: 0, wantChild: 1,
			wantCond: &group.Condition{Type: "Failed", Status: group.True, Reason: "FailJobSetFailurePolicyAction",
				Message: "applying FailJobSet failure policy action (first failed job: js-leader-0)"},
		},
		{
			name: "per rule the earliest-failed matching child is kept",
			policy: &group.FailurePolicy{MaxRestarts: 5, Rules: []group.Rule{
				{Name: "workers", Action: group.RestartJobSetAndIgnoreMaxRestarts, TargetReplicatedJobs: []string{"workers"}},
			}},
			children:   []group.Child{leaderPFP, workerBackoff, earlyWorker},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSetAndIgnoreMaxRestarts, wantRule: 0, wantChild: 2,
			wantCount: group.Counters{Restarts: 1},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "FailurePolicy_workers",
				Message: "applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: js-workers-0)"},
		},
		{
			name: "reason AND pattern AND target must all match; a pattern matches anywhere (RE2)",
			policy: &group.FailurePolicy{MaxRestarts: 5, Rules: []group.Rule{
				{Name: "wrongReason", Action: group.FailJobSet, OnJobFailureReasons: []string{"DeadlineExceeded"}, OnJobFailureMessagePatterns: []string{"exit code 42"}},
				{Name: "wrongTarget", Action: group.FailJobSet, OnJobFailureMessagePatterns: []string{"exit code 42"}, TargetReplicatedJobs: []string{"workers"}},
				{Name: "noPattern", Action: group.FailJobSet, OnJobFailureMessagePatterns: []string{"^exit", `code 4[0-1]\b`}},
				{Name: "exit42", Action: group.RestartJobSetAndIgnoreMaxRestarts, OnJobFailureReasons: []string{"BackoffLimitExceeded", "PodFailurePolicy"},
					OnJobFailureMessagePatterns: []string{"nomatch", `exit code 42\b`}, TargetReplicatedJobs: []string{"leader"}},
			}},
			children:   []group.Child{leaderPFP},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSetAndIgnoreMaxRestarts, wantRule: 3, wantChild: 0,
			wantCount: group.Counters{Restarts: 1},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "FailurePolicy_exit42",
				Message: "applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: js-leader-0)"},
		},
		{
			name:       "a child without a role label never matches, even a rule with no targets",
			policy:     &group.FailurePolicy{MaxRestarts: 1, Rules: []group.Rule{{Name: "all", Action: group.FailJobSet}}},
			children:   []group.Child{failedChild("stray", "", 0, "BackoffLimitExceeded", "", 0)},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSet, wantRule: -1, wantChild: 0,
			wantCount: group.Counters{Restarts: 1, RestartsCountTowardsMax: 1},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "DefaultFailurePolicy",
				Message: "applying RestartJobSet failure policy action (first failed job: stray)"},
		},
		{
			name:       "maxRestarts reached: RestartJobSet fails with ReachedMaxRestarts",
			policy:     &group.FailurePolicy{MaxRestarts: 2},
			children:   []group.Child{{Name: "js-w-0", Role: "w", Attempt: 4, Outcome: group.Failed}},
			counters:   group.Counters{Restarts: 4, RestartsCountTowardsMax: 2},
			wantEffect: group.Fail, wantAction: group.RestartJobSet, wantRule: -1, wantChild: 0,
			wantCount: group.Counters{Restarts: 4, RestartsCountTowardsMax: 2},
			wantCond: &group.Condition{Type: "Failed", Status: group.True, Reason: "ReachedMaxRestarts",
				Message: "jobset failed due to reaching max number of restarts (first failed job: js-w-0)"},
		},
		{
			name:       "per-child restarts counted towards the maximum are part of the budget",
			policy:     &group.FailurePolicy{MaxRestarts: 2},
			children:   []group.Child{{Name: "js-w-0", Role: "w", Outcome: group.Failed, JobAttempt: 0}},
			counters:   group.Counters{RestartsCountTowardsMax: 1, Jobs: map[string]group.RoleRestarts{"v": {Restarts: []int32{1}, CountTowardsMax: []int32{1}}}},
			wantEffect: group.Fail, wantAction: group.RestartJobSet, wantRule: -1, wantChild: 0,
			wantCount: group.Counters{RestartsCountTowardsMax: 1, Jobs: map[string]group.RoleRestarts{"v": {Restarts: []int32{1}, CountTowardsMax: []int32{1}}}},
			wantCond: &group.Condition{Type: "Failed", Status: group.True, Reason: "ReachedMaxRestarts",
				Message: "jobset failed due to reaching max number of restarts (first failed job: js-w-0)"},
		},
		{
			name:       "IgnoreMaxRestarts never fails and counts only restarts",
			policy:     &group.FailurePolicy{MaxRestarts: 0, Rules: []group.Rule{{Name: "r", Action: group.RestartJobSetAndIgnoreMaxRestarts}}},
			children:   []group.Child{{Name: "js-w-0", Role: "w", Attempt: 7, Outcome: group.Failed}},
			counters:   group.Counters{Restarts: 7},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSetAndIgnoreMaxRestarts, wantRule: 0, wantChild: 0,
			wantCount: group.Counters{Restarts: 8},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "FailurePolicy_r",
				Message: "applying RestartJobSetAndIgnoreMaxRestarts failure policy action (first failed job: js-w-0)"},
		},
		{
			name:       "RestartJob bumps only the failed index, sets no condition, no global counter",
			policy:     &group.FailurePolicy{MaxRestarts: 3, Rules: []group.Rule{{Name: "one", Action: group.RestartJob}}},
			children:   []group.Child{running("js-w-0", "w", 0), {Name: "js-w-2", Role: "w", Index: 2, Outcome: group.Failed}},
			wantEffect: group.RestartChild, wantAction: group.RestartJob, wantRule: 0, wantChild: 1,
			wantCount: group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{0, 0, 1}, CountTowardsMax: []int32{0, 0, 1}}}},
		},
		{
			name:       "RestartJob under an exhausted budget fails the group",
			policy:     &group.FailurePolicy{MaxRestarts: 1, Rules: []group.Rule{{Name: "one", Action: group.RestartJob}}},
			children:   []group.Child{{Name: "js-w-0", Role: "w", Outcome: group.Failed, JobAttempt: 1}},
			counters:   group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{1}, CountTowardsMax: []int32{1}}}},
			wantEffect: group.Fail, wantAction: group.RestartJob, wantRule: 0, wantChild: 0,
			wantCount: group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{1}, CountTowardsMax: []int32{1}}}},
			wantCond: &group.Condition{Type: "Failed", Status: group.True, Reason: "ReachedMaxRestarts",
				Message: "jobset failed due to reaching max number of restarts (first failed job: js-w-0)"},
		},
		{
			name:       "RestartJobAndIgnoreMaxRestarts bumps jobRestarts only, past the budget",
			policy:     &group.FailurePolicy{MaxRestarts: 0, Rules: []group.Rule{{Name: "one", Action: group.RestartJobAndIgnoreMaxRestarts}}},
			children:   []group.Child{{Name: "js-w-1", Role: "w", Index: 1, Outcome: group.Failed, JobAttempt: 2}},
			counters:   group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{0, 2}}}},
			wantEffect: group.RestartChild, wantAction: group.RestartJobAndIgnoreMaxRestarts, wantRule: 0, wantChild: 0,
			wantCount: group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{0, 3}}}},
		},
		{
			name:       "a failed child of an old index attempt is ignored",
			policy:     &group.FailurePolicy{MaxRestarts: 3},
			children:   []group.Child{{Name: "js-w-0", Role: "w", Outcome: group.Failed, JobAttempt: 0}},
			counters:   group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{1}}}},
			wantEffect: group.NoFailure, wantRule: -1, wantChild: -1,
			wantCount: group.Counters{Jobs: map[string]group.RoleRestarts{"w": {Restarts: []int32{1}}}},
		},
		{
			name:       "ties on the failure time keep the first child",
			policy:     &group.FailurePolicy{MaxRestarts: 3},
			children:   []group.Child{failedChild("a", "w", 0, "", "", 5), failedChild("b", "w", 1, "", "", 5)},
			wantEffect: group.RestartGroup, wantAction: group.RestartJobSet, wantRule: -1, wantChild: 0,
			wantCount: group.Counters{Restarts: 1, RestartsCountTowardsMax: 1},
			wantCond: &group.Condition{Type: "RestartingJobSet", Status: group.True, Reason: "DefaultFailurePolicy",
				Message: "applying RestartJobSet failure policy action (first failed job: a)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.counters.Clone()
			d, err := mustCompile(t, tc.policy).Decide(tc.children, tc.counters)
			require.NoError(t, err)
			assert.Equal(t, tc.wantEffect, d.Effect, "Effect")
			assert.Equal(t, tc.wantAction, d.Action, "Action")
			assert.Equal(t, tc.wantRule, d.Rule, "Rule")
			assert.Equal(t, tc.wantChild, d.Child, "Child")
			if diff := cmp.Diff(tc.wantCount, d.Counters); diff != "" {
				t.Errorf("Counters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCond, d.Condition); diff != "" {
				t.Errorf("Condition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.counters); diff != "" {
				t.Errorf("Decide modified its counters (-before +after):\n%s", diff)
			}
			wantTerminal := ""
			if tc.wantEffect == group.Fail {
				wantTerminal = "Failed"
			}
			assert.Equal(t, wantTerminal, d.TerminalState, "TerminalState")
			if tc.wantEffect != group.NoFailure {
				assert.NotEmpty(t, d.EventReason)
				assert.Contains(t, d.EventMessage, "(first failed job: "+tc.children[d.Child].Name+")")
			}
		})
	}
}

func TestDecideIndexOutOfRange(t *testing.T) {
	m := mustCompile(t, &group.FailurePolicy{MaxRestarts: 3, Rules: []group.Rule{{Name: "one", Action: group.RestartJob}}})
	d, err := m.Decide([]group.Child{{Name: "js-w-1024", Role: "w", Index: 1024, Outcome: group.Failed}}, group.Counters{})
	require.ErrorIs(t, err, group.ErrIndexOutOfRange)
	assert.Contains(t, err.Error(), `"js-w-1024"`)
	assert.Equal(t, group.NoFailure, d.Effect)
}

func TestCompileBadPattern(t *testing.T) {
	_, err := group.Compile(&group.FailurePolicy{Rules: []group.Rule{{}, {OnJobFailureMessagePatterns: []string{"ok", "a(b"}}}})
	require.Error(t, err)
	var fe *fielderr.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "failurePolicy.rules[1].onJobFailureMessagePatterns[1]", fe.Field)
	assert.Equal(t, "a(b", fe.BadValue)
	assert.Contains(t, fe.Detail, "must be a valid RE2 regular expression")
	assert.True(t, errors.Is(err, group.ErrInvalid))
	// Compile reports the pattern as Validate does.
	spec := group.Spec{Name: "js", Roles: []group.Role{{Name: "w", Replicas: 1}},
		FailurePolicy: &group.FailurePolicy{Rules: []group.Rule{{Action: group.FailJobSet}, {Action: group.FailJobSet, OnJobFailureMessagePatterns: []string{"ok", "a(b"}}}}}
	errs := group.Validate(&spec)
	require.Len(t, errs, 1)
	assert.Equal(t, fe, errs[0])
}

func TestNilMatcherFails(t *testing.T) {
	var m *group.Matcher
	d, err := m.Decide([]group.Child{failedChild("x", "w", 0, "", "", 0)}, group.Counters{})
	require.NoError(t, err)
	assert.Equal(t, group.Fail, d.Effect)
	assert.Equal(t, "FailedJobs", d.Condition.Reason)
}
