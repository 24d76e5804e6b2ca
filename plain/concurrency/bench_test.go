package concurrency_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jobkit/jobkit/plain/concurrency"
)

// manyPeers returns n peers spread over 50 names and 5 queues, a third of
// them each triggered, pending and finished.
func manyPeers(n int) []concurrency.Peer[string] {
	states := []concurrency.State{concurrency.StateTriggered, concurrency.StatePending, concurrency.StateFinished}
	peers := make([]concurrency.Peer[string], n)
	for i := range peers {
		peers[i] = concurrency.Peer[string]{
			UID:     fmt.Sprintf("uid-%08d", i),
			JobName: "job-" + strconv.Itoa(i%50),
			Queue:   "q" + strconv.Itoa(i%5),
			State:   states[i%3],
			Created: t0.Add(time.Duration(i) * time.Second),
		}
	}
	return peers
}

func BenchmarkDecide(b *testing.B) {
	for _, n := range []int{10, 1000, 10000, 100000} {
		peers := manyPeers(n)
		c := concurrency.Candidate[string]{Peer: peers[n/2], MaxConcurrency: n}
		queues := map[string]int{"q0": n, "q1": n, "q2": n, "q3": n, "q4": n}
		b.Run("allowed/n="+strconv.Itoa(n), func(b *testing.B) {
			limits := concurrency.Limits{MaxPending: n, Queues: queues}
			b.ReportAllocs()
			for b.Loop() {
				if d, err := concurrency.Decide(c, peers, limits); err != nil || !d.Allowed {
					b.Fatal(d, err)
				}
			}
		})
		b.Run("blocked/n="+strconv.Itoa(n), func(b *testing.B) {
			limits := concurrency.Limits{Queues: map[string]int{c.Queue: 1}}
			b.ReportAllocs()
			for b.Loop() {
				if d, err := concurrency.Decide(c, peers, limits); err != nil || d.Allowed {
					b.Fatal(d, err)
				}
			}
		})
	}
}

func BenchmarkKeyedMutex(b *testing.B) {
	var m concurrency.KeyedMutex[string]
	b.Run("TryLock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			unlock, _ := m.TryLock("job/unit")
			unlock()
		}
	})
	b.Run("TryLockAll/2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			unlock, _ := m.TryLockAll("job/unit", "queue/gpu")
			unlock()
		}
	})
	b.Run("TryLock/busy", func(b *testing.B) {
		hold, _ := m.TryLock("busy")
		defer hold()
		b.ReportAllocs()
		for b.Loop() {
			m.TryLock("busy")
		}
	})
}
