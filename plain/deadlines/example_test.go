package deadlines_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/plain/deadlines"
)

func ExampleCheck() {
	created := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	run := deadlines.Pod{Phase: deadlines.PhasePending, Created: created}
	timeouts := deadlines.Timeouts{Unscheduled: time.Minute, Running: time.Hour}

	r, _ := deadlines.Check(run, timeouts, created.Add(20*time.Second))
	fmt.Printf("%s: expired=%v, check again in %v\n", r.Kind, r.Expired, r.Remaining)

	run.Phase, run.Started = deadlines.PhaseRunning, created.Add(30*time.Second)
	r, _ = deadlines.Check(run, timeouts, created.Add(2*time.Hour))
	fmt.Printf("%s: expired=%v, %q\n", r.Kind, r.Expired, r.Reason)
	// Output:
	// Unscheduled: expired=false, check again in 40s
	// Running: expired=true, "Pod running timeout."
}

func ExampleTimeouts_Validate() {
	for _, err := range (deadlines.Timeouts{Pending: -time.Second}).Validate() {
		fmt.Println(err)
	}
	// Output:
	// deadlines: pending=-1s: must not be negative (0 means no timeout)
}

func ExampleMeasure() {
	since := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	r := deadlines.Measure(deadlines.KindPending, since, 10*time.Minute, since.Add(4*time.Minute))
	fmt.Println(r.Elapsed, r.Remaining, r.Expired)
	// Output:
	// 4m0s 6m0s false
}
