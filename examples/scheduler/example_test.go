package scheduler_test

import (
	"context"
	"fmt"

	"github.com/jobkit/jobkit/examples/scheduler"
	"github.com/jobkit/jobkit/plain/concurrency"
)

// Four tasks, two at a time, on a queue of two slots; every task succeeds.
func ExampleScheduler_Run() {
	s := scheduler.New(concurrency.Limits{Queues: map[string]int{"cpu": 2}})
	res, err := s.Run(context.Background(), scheduler.Group{Name: "render", Queue: "cpu", Tasks: 4, Parallelism: 2},
		func(ctx context.Context, index int) int32 { return 0 })
	fmt.Println(res.Succeeded, res.Reason, res.SucceededIndexes, res.Runs, err)
	// Output: true CompletionsReached 0-3 4 <nil>
}
