package successpolicy_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/successpolicy"
)

// A leader-worker Job: it succeeds when the leader (index 0) succeeds, or when any
// three of the workers 1-4 do.
func ExampleCompile_match() {
	policy := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0")},
		{SucceededIndexes: ptr.To("1-4"), SucceededCount: ptr.To[int32](3)},
	}}
	compiled, err := successpolicy.Compile(policy, 5) // once per policy
	if err != nil {
		panic(err)
	}
	for _, completed := range []string{"1,3", "1,3,4", "0"} {
		succeeded, _ := plainindexes.Parse(completed, 5)
		r := compiled.Match(succeeded)
		fmt.Printf("completed %q: matched=%v reason=%q message=%q\n", completed, r.Matched, r.Reason, r.Message)
	}
	// Output:
	// completed "1,3": matched=false reason="" message=""
	// completed "1,3,4": matched=true reason="SuccessPolicy" message="Matched rules at index 1"
	// completed "0": matched=true reason="SuccessPolicy" message="Matched rules at index 0"
}

// Compile once per Job generation, then match on every sync without parsing or
// allocating. A rule that cannot be read completely is reported and its readable part
// is kept.
func ExampleCompile() {
	policy := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
		{SucceededIndexes: ptr.To("0,x,2")},
		{SucceededCount: ptr.To[int32](4)},
	}}
	compiled, err := successpolicy.Compile(policy, 10)
	if err != nil {
		fmt.Println("compile:", err)
	}
	for _, completed := range []string{"0,1", "0,2"} {
		succeeded, _ := plainindexes.Parse(completed, 10)
		r := compiled.Match(succeeded)
		fmt.Printf("completed %q: rule %d\n", completed, r.RuleIndex)
	}
	// Output:
	// compile: spec.successPolicy.rules[0].succeededIndexes: invalid index intervals "0,x,2": part 1 "x": not a non-negative decimal number
	// completed "0,1": rule -1
	// completed "0,2": rule 0
}

func ExampleValidate() {
	spec := &batchv1.JobSpec{
		CompletionMode: ptr.To(batchv1.IndexedCompletion),
		Completions:    ptr.To[int32](5),
		SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
			{SucceededIndexes: ptr.To("0-2,7")},
			{SucceededCount: ptr.To[int32](6)},
			{},
		}},
	}
	for _, err := range successpolicy.Validate(spec, nil) {
		fmt.Println(err)
	}
	// Output:
	// spec.successPolicy.rules[0].succeededIndexes: Invalid value: "0-2,7": error parsing succeededIndexes: too large index: "7"
	// spec.successPolicy.rules[1].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)
	// spec.successPolicy.rules[2]: Required value: at least one of succeededCount or succeededIndexes must be specified
}
