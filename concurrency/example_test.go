package concurrency_test

import (
	"fmt"
	"time"

	"github.com/jobkit/jobkit/concurrency"
)

func ExampleDecide() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	// Peers as a controller maps its custom resources: UIDs are the objects' UIDs.
	peers := []concurrency.Peer{
		{UID: "7c0e", JobName: "e2e", State: concurrency.StatePending, Created: t},
		{UID: "91aa", JobName: "e2e", State: concurrency.StateTriggered, Created: t.Add(time.Minute)},
	}
	d, err := concurrency.Decide(concurrency.Candidate{Peer: peers[1], MaxConcurrency: 1}, peers, concurrency.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Allowed, d.BlockedBy, d.RetryAfter)
	// Output:
	// false MaxConcurrency 10s
}
