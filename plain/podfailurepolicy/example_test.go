package podfailurepolicy_test

import (
	"fmt"

	pfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
)

// Does exit code 42 of container "task" fail the group? No pod needed.
func ExampleMatch() {
	task := "task"
	policy := &pfp.Policy{Rules: []pfp.Rule{
		{Action: pfp.ActionIgnore, OnPodConditions: []pfp.Condition{{Type: "DisruptionTarget"}}},
		{Action: pfp.ActionFailJob, OnExitCodes: &pfp.ExitCodes{ContainerName: &task, Operator: pfp.OpIn, Values: []int32{42}}},
	}}
	for _, code := range []int32{42, 1} {
		r := pfp.Match(policy, &pfp.Failure{Containers: []pfp.Container{{Name: "task", ExitCode: code}}})
		fmt.Printf("exit %d: action=%q counts=%v %s\n", code, r.Action, r.CountsTowardBackoff, r.Message)
	}
	// Output:
	// exit 42: action="FailJob" counts=true Container task failed with exit code 42 matching FailJob rule at index 1
	// exit 1: action="" counts=true
}

func ExampleValidate() {
	policy := &pfp.Policy{Rules: []pfp.Rule{
		{Action: pfp.ActionFailIndex, OnExitCodes: &pfp.ExitCodes{Operator: pfp.OpIn, Values: []int32{3, 1}}},
	}}
	for _, err := range pfp.Validate(policy, pfp.Context{}) {
		fmt.Println(err)
	}
	// Output:
	// rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set
	// rules[0].onExitCodes.values: Invalid value: []int32{3, 1}: must be ordered
}

// A condition type is checked as the API server checks a label key.
func ExampleValidate_conditionType() {
	policy := &pfp.Policy{Rules: []pfp.Rule{{Action: pfp.ActionIgnore, OnPodConditions: []pfp.Condition{
		{Type: "example.com/Preempted"}, {Type: "/Preempted"},
	}}}}
	for _, err := range pfp.Validate(policy, pfp.Context{}) {
		fmt.Println(err)
	}
	// Output:
	// rules[0].onPodConditions[1].type: Invalid value: "/Preempted": prefix part must be non-empty
}
