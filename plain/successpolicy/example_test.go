package successpolicy_test

import (
	"fmt"

	"github.com/jobkit/jobkit/plain/indexes"
	sp "github.com/jobkit/jobkit/plain/successpolicy"
)

// A group of 10 indexed tasks succeeds when task 0 (the leader) and any 5 tasks
// have succeeded. No JobSpec needed.
func ExampleCompile() {
	leader, five := "0", int32(5)
	policy := &sp.Policy{Rules: []sp.Rule{{SucceededIndexes: &leader}, {SucceededCount: &five}}}
	compiled, err := sp.Compile(policy, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, done := range []string{"1-3", "0,4"} {
		succeeded, _ := indexes.Parse(done, 10)
		r := compiled.Match(succeeded)
		fmt.Printf("succeeded %q: matched=%v rule=%d %q\n", done, r.Matched, r.RuleIndex, r.Message)
	}
	// Output:
	// succeeded "1-3": matched=false rule=-1 ""
	// succeeded "0,4": matched=true rule=0 "Matched rules at index 0"
}

// Compile rejects what Validate rejects, and keeps what it can read.
func ExampleValidate() {
	list, n := "0-2,7", int32(6)
	policy := &sp.Policy{Rules: []sp.Rule{{SucceededIndexes: &list}, {SucceededCount: &n}}}
	for _, err := range sp.Validate(policy, 5) {
		fmt.Println(err)
	}
	_, err := sp.Compile(policy, 5)
	fmt.Println(err)
	// Output:
	// rules[0].succeededIndexes: Invalid value: "0-2,7": error parsing succeededIndexes: too large index: "7"
	// rules[1].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)
	// rules[0].succeededIndexes: invalid index intervals "0-2,7": part 1 "7": index out of range: must be below 5
}
