package indexes_test

import (
	"errors"
	"fmt"

	"github.com/jobkit/jobkit/plain/indexes"
)

func ExampleParse() {
	set, err := indexes.Parse("1,3-5,7", 10)
	fmt.Println(set, set.Count(), set.Has(4), err)

	// Bad parts are reported; the good ones are kept.
	set, err = indexes.Parse("0,x,8-12", 10)
	fmt.Println(set)
	var perr *indexes.ParseError
	if errors.As(err, &perr) {
		for _, p := range perr.Parts {
			fmt.Printf("part %d %q: %s\n", p.Position, p.Part, p.Reason)
		}
	}
	// Output:
	// 1,3-5,7 5 true <nil>
	// 0,8,9
	// part 1 "x": not a non-negative decimal number
	// part 2 "8-12": index out of range: must be below 10
}

func ExampleIntervals_String() {
	fmt.Println(indexes.FromIndexes([]int{9, 0, 1, 4, 5, 6, 7}).String())
	// Output: 0,1,4-7,9
}

func ExampleFirstPending() {
	succeeded, _ := indexes.Parse("0-3,6", indexes.NoLimit)
	failed, _ := indexes.Parse("5", indexes.NoLimit)
	active := indexes.FromIndexes([]int{4, 8})
	fmt.Println(indexes.FirstPending(10, 3, succeeded, failed, active))
	// Output: [7 9]
}

func ExampleFirstPendingFunc() {
	inBackoff := map[int]bool{1: true}
	fmt.Println(indexes.FirstPendingFunc(10, 2, func(ix int) bool { return inBackoff[ix] }))
	// Output: [0 2]
}

func ExampleParse_outOfRange() {
	// After an elastic Job shrinks to 5 completions, indexes at or above 5 are out of
	// range: errors.Is tells that from a damaged string.
	set, err := indexes.Parse("1,3-7", 5)
	fmt.Println(set, errors.Is(err, indexes.ErrOutOfRange), errors.Is(err, indexes.ErrSyntax))
	// Output: 1,3,4 true false
}

func ExampleNormalize() {
	// A set written by hand, out of order and overlapping, made canonical.
	set := indexes.Normalize([]indexes.Interval{{First: 6, Last: 9}, {First: 0, Last: 2}, {First: 3, Last: 4}})
	fmt.Println(set, set.Canonical(), set.Count())
	// Output: 0-4,6-9 true 9
}

func ExampleOutcomes_Record() {
	// Index 2 failed earlier; a second pod of it (created while the controller could
	// not see the first) succeeds now. Index 3 has a success and a failure in one sync.
	prev := indexes.Outcomes{Succeeded: indexes.FromIndexes([]int{0}), Failed: indexes.FromIndexes([]int{2})}
	next := prev.Record(5, []int{2, 3}, []int{3, 4})
	fmt.Printf("succeeded %q, failed %q\n", next.Succeeded, next.Failed)
	// Output: succeeded "0,3", failed "2,4"
}

func ExampleIndexFailed() {
	// backoffLimitPerIndex 1: the pod's index already counted one failure.
	fmt.Println(indexes.IndexFailed(indexes.IndexFailure{Count: indexes.FailureCount{Failed: 1}, BackoffLimitPerIndex: 1}))
	// An Ignore rule matched: the failure does not count.
	fmt.Println(indexes.IndexFailed(indexes.IndexFailure{Ignored: true, Count: indexes.FailureCount{Failed: 1}, BackoffLimitPerIndex: 1}))
	// A FailIndex rule matched: the index fails at once.
	fmt.Println(indexes.IndexFailed(indexes.IndexFailure{FailIndex: true, BackoffLimitPerIndex: 3}))
	// Output:
	// true
	// false
	// true
}

func ExampleStrays() {
	// Active tasks by completion index; among tasks of one index, the older one (lower
	// start number) is kept, as the Job controller keeps the longest-running pod.
	index := []int{0, 1, 1, 5, indexes.Unknown}
	started := []int{10, 20, 30, 40, 50}
	res := indexes.Strays(index, 3, func(i, j int) int { return started[j] - started[i] })
	for _, s := range res.Remove {
		fmt.Println("remove task", s.Pos, s.Reason)
	}
	fmt.Println("kept", res.Kept, "active", res.Active)
	// Output:
	// remove task 4 NoIndex
	// remove task 2 Duplicate
	// remove task 3 OutOfRange
	// kept [0 1] active 0,1
}
