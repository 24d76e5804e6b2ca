package concurrency_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/plain/concurrency"
)

func ExampleDecide() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	peers := []concurrency.Peer[string]{
		{UID: "a", JobName: "e2e", State: concurrency.StatePending, Created: t},
		{UID: "b", JobName: "e2e", State: concurrency.StateTriggered, Created: t.Add(time.Minute)},
		{UID: "c", JobName: "e2e", State: concurrency.StateTriggered, Created: t.Add(2 * time.Minute)},
		{UID: "d", JobName: "lint", State: concurrency.StateFinished, Created: t},
	}
	limits := concurrency.Limits{MaxPending: 10}
	// At most two "e2e" jobs at once: one runs, so the older triggered job may
	// start and the younger one waits for it.
	for _, p := range peers[1:3] {
		d, err := concurrency.Decide(concurrency.Candidate[string]{Peer: p, MaxConcurrency: 2}, peers, limits)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: allowed=%v %s", p.UID, d.Allowed, d.Message)
		if !d.Allowed {
			fmt.Printf(" (blocked by %s, retry after %v)", d.BlockedBy, d.RetryAfter)
		}
		fmt.Println()
	}
	// Output:
	// b: allowed=true within all limits
	// c: allowed=false 2 jobs named "e2e" are pending or were triggered earlier, at most 2 may run at once (blocked by MaxConcurrency, retry after 10s)
}

func ExampleDecide_queues() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	peers := []concurrency.Peer[string]{
		{UID: "a", JobName: "train", Queue: "gpu", State: concurrency.StatePending, Created: t},
	}
	limits := concurrency.Limits{Queues: map[string]int{"gpu": 1, "frozen": 0, "cpu": -1}}
	for _, q := range []string{"gpu", "frozen", "cpu", "tpu"} {
		c := concurrency.Candidate[string]{Peer: concurrency.Peer[string]{UID: "z", JobName: "eval", Queue: q, Created: t}}
		d, err := concurrency.Decide(c, peers, limits)
		switch {
		case errors.Is(err, concurrency.ErrUnknownQueue):
			fmt.Printf("%s: error: %v\n", q, err)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Printf("%s: allowed=%v, %s\n", q, d.Allowed, d.Message)
		}
	}
	// Output:
	// gpu: allowed=false, 1 jobs in queue "gpu" are pending or were triggered earlier, its capacity is 1
	// frozen: allowed=false, queue "frozen" has capacity 0: its jobs never start
	// cpu: allowed=true, within all limits
	// tpu: error: concurrency: Candidate.Queue="tpu": not configured in Limits.Queues
}

func ExampleKeyedMutex() {
	var locks concurrency.KeyedMutex[string]

	// A worker serialises "decide, create the pod, record pending" per job
	// name and per queue. A second worker on the same name requeues instead
	// of waiting.
	unlock, ok := locks.TryLockAll("name/e2e", "queue/gpu")
	fmt.Println("worker 1 locked:", ok)

	_, ok = locks.TryLockAll("name/e2e", "queue/cpu")
	fmt.Println("worker 2 locked:", ok)

	unlock()
	fmt.Println("held after unlock:", locks.Len())
	// Output:
	// worker 1 locked: true
	// worker 2 locked: false
	// held after unlock: 0
}
