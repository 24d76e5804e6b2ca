package podfailurepolicy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"

	pfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
)

func exitRule(action pfp.Action, op pfp.Operator, container string, values ...int32) pfp.Rule {
	ec := &pfp.ExitCodes{Operator: op, Values: values}
	if container != "" {
		ec.ContainerName = &container
	}
	return pfp.Rule{Action: action, OnExitCodes: ec}
}

// noMatch is the documented Result of a failure no rule claims: it counts.
var noMatch = pfp.Result{RuleIndex: -1, CountsTowardBackoff: true}

func condRule(action pfp.Action, patterns ...pfp.Condition) pfp.Rule {
	return pfp.Rule{Action: action, OnPodConditions: patterns}
}

func TestMatch(t *testing.T) {
	task42 := pfp.Failure{Containers: []pfp.Container{{Name: "task", ExitCode: 42}}}
	cases := []struct {
		name    string
		policy  *pfp.Policy
		failure *pfp.Failure
		want    pfp.Result
	}{
		{name: "nil policy", failure: &task42, want: noMatch},
		{name: "nil failure", policy: &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "", 42)}}, want: noMatch},
		{
			name:    "exit code without a pod: the message names no pod",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "task", 42)}},
			failure: &task42,
			want: pfp.Result{Matched: true, Action: pfp.ActionFailJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container task failed with exit code 42 matching FailJob rule at index 0"},
		},
		{
			name:    "named pod: the Job controller's sentence",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "", 42)}},
			failure: &pfp.Failure{Namespace: "ns", Name: "pod-1", Containers: []pfp.Container{{Name: "task", ExitCode: 42}}},
			want: pfp.Result{Matched: true, Action: pfp.ActionFailJob, CountsTowardBackoff: true,
				Message: "Container task for pod ns/pod-1 failed with exit code 42 matching FailJob rule at index 0"},
		},
		{
			name:    "name without namespace",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionCount, pfp.OpNotIn, "", 1)}},
			failure: &pfp.Failure{Name: "run-7", Containers: []pfp.Container{{Name: "task", ExitCode: 42}}},
			want: pfp.Result{Matched: true, Action: pfp.ActionCount, CountsTowardBackoff: true,
				Message: "Container task for pod run-7 failed with exit code 42 matching Count rule at index 0"},
		},
		{
			name:    "Ignore does not count; other container name does not match",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "other", 42), exitRule(pfp.ActionIgnore, pfp.OpIn, "", 42)}},
			failure: &task42,
			want: pfp.Result{Matched: true, Action: pfp.ActionIgnore, RuleIndex: 1,
				Message: "Container task failed with exit code 42 matching Ignore rule at index 1"},
		},
		{
			name:   "regular containers before init containers",
			policy: &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailIndex, pfp.OpNotIn, "", 0)}},
			failure: &pfp.Failure{Containers: []pfp.Container{
				{Name: "setup", Init: true, ExitCode: 3}, {Name: "ok", ExitCode: 0}, {Name: "main", ExitCode: 7}}},
			want: pfp.Result{Matched: true, Action: pfp.ActionFailIndex, CountsTowardBackoff: true,
				Message: "Container main failed with exit code 7 matching FailIndex rule at index 0"},
		},
		{
			name:    "a zero exit code never matches, not even NotIn",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpNotIn, "", 1)}},
			failure: &pfp.Failure{Containers: []pfp.Container{{Name: "task"}}},
			want:    noMatch,
		},
		{
			name:    "unknown action and operator are skipped",
			policy:  &pfp.Policy{Rules: []pfp.Rule{exitRule("Retry", pfp.OpIn, "", 42), exitRule(pfp.ActionFailJob, "Between", "", 42)}},
			failure: &task42,
			want:    noMatch,
		},
		{
			name: "condition, empty pattern status means True",
			policy: &pfp.Policy{Rules: []pfp.Rule{
				condRule(pfp.ActionFailJob, pfp.Condition{Type: "Ready", Status: pfp.StatusFalse}),
				condRule(pfp.ActionIgnore, pfp.Condition{Type: "DisruptionTarget"})}},
			failure: &pfp.Failure{Conditions: []pfp.Condition{{Type: "Ready", Status: pfp.StatusTrue}, {Type: "DisruptionTarget", Status: pfp.StatusTrue}}},
			want: pfp.Result{Matched: true, Action: pfp.ActionIgnore, RuleIndex: 1,
				Message: "Condition DisruptionTarget matching Ignore rule at index 1"},
		},
		{
			name:    "condition of a named pod",
			policy:  &pfp.Policy{Rules: []pfp.Rule{condRule(pfp.ActionFailJob, pfp.Condition{Type: "DisruptionTarget", Status: pfp.StatusTrue})}},
			failure: &pfp.Failure{Namespace: "ns", Name: "p", Conditions: []pfp.Condition{{Type: "DisruptionTarget", Status: pfp.StatusTrue}}},
			want: pfp.Result{Matched: true, Action: pfp.ActionFailJob, CountsTowardBackoff: true,
				Message: "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := pfp.Match(tc.policy, tc.failure)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Match() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchAllocations(t *testing.T) {
	policy := &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "task", 42)}}
	miss := &pfp.Failure{Containers: []pfp.Container{{Name: "task", ExitCode: 1}}}
	hit := &pfp.Failure{Containers: []pfp.Container{{Name: "task", ExitCode: 42}}}
	assert.Zero(t, testing.AllocsPerRun(100, func() { pfp.Match(policy, miss) }), "Match(no rule matches) allocations")
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { pfp.Match(policy, hit) }), "Match(match) allocations")
}
