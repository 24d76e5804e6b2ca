package ledger_test

import (
	"fmt"
	"slices"

	"github.com/jobkit/jobkit/plain/ledger"
)

// A scheduler keeps each finished task "held" (not forgotten) until the ledger that
// records it is stored, then releases it and counts it.
func Example() {
	var stored ledger.Uncounted[string]
	var succeeded, failed int32

	finished := []ledger.Finished[string]{
		{UID: "task-a", Outcome: ledger.Succeeded},
		{UID: "task-b", Outcome: ledger.Failed},
		{UID: "task-c", Outcome: ledger.NotCounted},
	}
	r, err := ledger.Record(stored, finished, nil, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	stored = r.Uncounted // store it durably before releasing anything
	fmt.Println("recorded:", r.NewSucceeded, r.NewFailed, "release:", r.Release)

	// All three were released; none is held any more.
	s, _ := ledger.Settle(stored, slices.Values([]string{}), nil)
	stored = s.Uncounted
	succeeded, failed = s.AddTo(succeeded, failed)
	fmt.Println("counted:", succeeded, failed, "ledger empty:", len(stored.Succeeded)+len(stored.Failed) == 0)
	// Output:
	// recorded: [task-a] [task-b] release: [0 1 2]
	// counted: 1 1 ledger empty: true
}

func ExampleRecord_limit() {
	finished := []ledger.Finished[string]{
		{UID: "a", Outcome: ledger.Failed},
		{UID: "b", Outcome: ledger.SucceededIndex, Index: 7},
		{UID: "c", Outcome: ledger.Failed},
		{UID: "d", Outcome: ledger.NotCounted},
	}
	r, _ := ledger.Record(ledger.Uncounted[string]{}, finished, nil, 2)
	fmt.Println(r.Uncounted.Failed, r.NewSucceededIndexes, r.Release, r.LimitReached)
	// Output:
	// [a] [7] [0 1 3] true
}

func ExampleSettle() {
	stored := ledger.Uncounted[string]{Succeeded: []string{"a", "b"}, Failed: []string{"c"}}
	held := []string{"b", "x"} // b still held; x is not in the ledger
	s, _ := ledger.Settle(stored, slices.Values(held), nil)
	fmt.Println(s.SucceededUIDs, s.FailedUIDs, s.Uncounted.Succeeded)
	// Output:
	// [a] [c] [b]
}

func ExampleErrors() {
	stored := ledger.Uncounted[string]{Succeeded: []string{"a"}, Failed: []string{"a"}}
	_, err := ledger.Record(stored, []ledger.Finished[string]{{Outcome: ledger.Failed}}, nil, 0)
	fmt.Println(err)
	// Output:
	// ledger: uncounted.succeeded[0]: UID "a" is also listed in failed; kept once, as failed; finished[0].uid: a UID is required; not recorded, still held
}
