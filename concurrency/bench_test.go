package concurrency_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jobkit/jobkit/concurrency"
	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkDecide is the plain package's BenchmarkDecide/allowed through the
// Kubernetes face: the difference is the cost of the conversion.
func BenchmarkDecide(b *testing.B) {
	states := []concurrency.State{concurrency.StateTriggered, concurrency.StatePending, concurrency.StateFinished}
	for _, n := range []int{10, 1000, 100000} {
		peers := make([]concurrency.Peer, n)
		for i := range peers {
			peers[i] = concurrency.Peer{UID: types.UID(fmt.Sprintf("uid-%08d", i)), JobName: "job-" + strconv.Itoa(i%50),
				Queue: "q" + strconv.Itoa(i%5), State: states[i%3], Created: t0.Add(time.Duration(i) * time.Second)}
		}
		c := concurrency.Candidate{Peer: peers[n/2], MaxConcurrency: n}
		limits := concurrency.Limits{MaxPending: n, Queues: map[string]int{"q0": n, "q1": n, "q2": n, "q3": n, "q4": n}}
		b.Run("allowed/n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d, err := concurrency.Decide(c, peers, limits); err != nil || !d.Allowed {
					b.Fatal(d, err)
				}
			}
		})
	}
}
