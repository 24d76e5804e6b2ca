package active_test

import (
	"fmt"

	"github.com/jobkit/jobkit/plain/active"
)

func ExampleWant() {
	// 10 tasks, 4 at a time, 8 done: only 2 are left to run.
	fmt.Println(active.Want(active.Job{Completions: 10, Parallelism: 4, Succeeded: 8, Active: 3}))
	// A work queue with a success lets the running tasks finish and starts no more.
	fmt.Println(active.Want(active.Job{Completions: active.NoCompletions, Parallelism: 4, Succeeded: 1, Active: 3}))
	// Suspended: nothing runs.
	fmt.Println(active.Want(active.Job{Completions: 10, Parallelism: 4, Suspended: true}))
	// Output:
	// 2
	// 3
	// 0
}
