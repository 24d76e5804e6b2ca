package plain_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/plain/active"
	"github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plain/indexes"
)

// One step of a scheduler with no Kubernetes object: how many tasks to start, which
// indexes, and how long a failed index waits, from plain values only.
func Example() {
	done, err := indexes.Parse("0-3,6", 10)
	if err != nil {
		panic(err)
	}
	running := indexes.FromIndexes([]int{4})
	want := active.Want(active.Job{Completions: 10, Parallelism: 3, Succeeded: done.Count(), Active: 1})
	fmt.Println("start:", indexes.FirstPending(10, want-1, done, running))

	failedAt := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	policy := backoff.Policy{Base: 10 * time.Second, Max: 10 * time.Minute}
	fmt.Println("index 5 may run again in", policy.IndexRemaining(2, 0, failedAt, failedAt.Add(15*time.Second)))
	// Output:
	// start: [5 7]
	// index 5 may run again in 25s
}
