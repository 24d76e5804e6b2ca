package concurrency_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jobkit/jobkit/plain/concurrency"
)

// FuzzDecide builds peers from bytes (3 per peer: state/name/queue, creation
// second, UID) and checks that Decide never panics and that an allowed
// candidate respects every limit, recounted here the slow way.
func FuzzDecide(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3, 4, 2, 5, 6}, uint8(3), int8(2), int8(1), int8(1), uint8(2))
	f.Add([]byte{}, uint8(0), int8(0), int8(0), int8(0), uint8(0))
	f.Add([]byte{0x41, 3, 3, 0x42, 3, 2, 0x40, 3, 4}, uint8(3), int8(1), int8(0), int8(-1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, selfSec uint8, maxConc, maxPending, capacity int8, selfUID uint8) {
		states := []concurrency.State{concurrency.StateTriggered, concurrency.StatePending, concurrency.StateFinished, "bogus"}
		names := []string{"unit", "lint"}
		queues := []string{"", "gpu", "cpu"}
		var peers []concurrency.Peer[string]
		for i := 0; i+2 < len(data); i += 3 {
			b := data[i]
			peers = append(peers, concurrency.Peer[string]{
				State:   states[int(b&3)],
				JobName: names[int(b>>2)&1],
				Queue:   queues[int(b>>3)%3],
				Created: t0.Add(time.Duration(data[i+1]%8) * time.Second),
				UID:     fmt.Sprint(data[i+2] % 8),
			})
		}
		c := concurrency.Candidate[string]{
			Peer: concurrency.Peer[string]{UID: fmt.Sprint(selfUID % 8), JobName: "unit", Queue: queues[int(selfUID)%3],
				Created: t0.Add(time.Duration(selfSec%8) * time.Second)},
			MaxConcurrency: int(maxConc),
		}
		limits := concurrency.Limits{MaxPending: int(maxPending), Queues: map[string]int{"gpu": int(capacity)}}

		d, err := concurrency.Decide(c, peers, limits)
		if err != nil {
			if d != (concurrency.Decision{}) {
				t.Fatalf("Decide returned %+v with error %v", d, err)
			}
			return
		}
		var pending, sameName, sameQueue int
		for _, p := range peers {
			if p.UID == c.UID {
				continue
			}
			if p.State == concurrency.StatePending {
				pending++
			}
			earlier := p.Created.Before(c.Created) || (p.Created.Equal(c.Created) && p.UID < c.UID)
			if p.State == concurrency.StatePending || (p.State == concurrency.StateTriggered && earlier) {
				if p.JobName == c.JobName {
					sameName++
				}
				if c.Queue != "" && p.Queue == c.Queue {
					sameQueue++
				}
			}
		}
		want := concurrency.Counts{Pending: pending, SameName: sameName, SameQueue: sameQueue}
		if d.Counts != want {
			t.Fatalf("Counts = %+v, want %+v", d.Counts, want)
		}
		if !d.Allowed {
			if d.BlockedBy == concurrency.LimitNone || d.RetryAfter <= 0 {
				t.Fatalf("blocked decision without a limit or wait: %+v", d)
			}
			return
		}
		if limits.MaxPending > 0 && pending >= limits.MaxPending {
			t.Fatalf("allowed with %d pending, MaxPending %d", pending, limits.MaxPending)
		}
		if c.MaxConcurrency > 0 && sameName >= c.MaxConcurrency {
			t.Fatalf("allowed with %d ahead, MaxConcurrency %d", sameName, c.MaxConcurrency)
		}
		if c.Queue != "" {
			capc := limits.Queues[c.Queue]
			if capc == 0 || (capc > 0 && sameQueue >= capc) {
				t.Fatalf("allowed with %d ahead in queue %q of capacity %d", sameQueue, c.Queue, capc)
			}
		}
		if d.BlockedBy != concurrency.LimitNone || d.RetryAfter != 0 || d.Limit != 0 {
			t.Fatalf("allowed decision with blocking fields: %+v", d)
		}
	})
}
