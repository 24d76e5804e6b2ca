package backoff_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/plain/backoff"
)

func ExamplePolicy_Delay() {
	var p backoff.Policy // zero: the Job controller's 10s doubling to 10 minutes
	for _, n := range []int{0, 1, 2, 3, 7} {
		fmt.Println(n, p.Delay(n))
	}
	// Output:
	// 0 0s
	// 1 10s
	// 2 20s
	// 3 40s
	// 7 10m0s
}

func ExamplePolicy_Remaining() {
	last := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := backoff.Policy{Base: time.Second, Max: time.Minute}
	fmt.Println(p.Remaining(3, last, last.Add(1500*time.Millisecond)))
	// Output: 2.5s
}

func ExamplePolicy_IndexRemaining() {
	// The last failed task of index 4 had seen 1 counted and 1 ignored failure before
	// its own: the index has failed 3 times in a row.
	last := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	fmt.Println(backoff.Policy{}.IndexRemaining(1, 1, last, last.Add(5*time.Second)))
	// Output: 35s
}

func ExampleRecord_Advance() {
	t := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var rec backoff.Record
	// Two tasks failed, at 12:00:00 and 12:00:05.
	rec = rec.Advance(nil, []time.Time{t, t.Add(5 * time.Second)})
	fmt.Println(rec.Failures, rec.Remaining(backoff.Policy{}, t.Add(10*time.Second)))
	// One succeeded at 12:00:20, one failed at 12:00:30: the streak restarts.
	rec = rec.Advance([]time.Time{t.Add(20 * time.Second)}, []time.Time{t.Add(30 * time.Second)})
	fmt.Println(rec.Failures, rec.Remaining(backoff.Policy{}, t.Add(30*time.Second)))
	// Output:
	// 2 15s
	// 1 10s
}

func ExampleMerge() {
	t := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	kept := backoff.Record{} // a restarted scheduler has forgotten everything
	rebuilt := backoff.Record{Failures: 4, LastFailure: t}
	fmt.Println(backoff.Merge(kept, rebuilt).Failures)
	// Output: 4
}
