package reconciletest_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

var latencyTable = flag.Bool("latency.table", false, "print the latency table (make latency)")

func TestRunLatencySmall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const L = 10 * time.Millisecond
		res, err := reconciletest.RunLatency(context.Background(), reconciletest.LatencyOptions{Pods: 10, Latency: L})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("N=10: %v", res)
		if res.Creates != 10 {
			t.Errorf("creates = %d, want 10", res.Creates)
		}
	})
}

func TestLatencyTable(t *testing.T) {
	if !*latencyTable {
		t.Skip("run with -latency.table (make latency)")
	}
	const L = 10 * time.Millisecond
	fmt.Println("| mode | N | event lag | time | syncs | writes | writes/pod |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, indexed := range []bool{false, true} {
		for _, n := range []int{100, 1000, 5000, 20000} {
			for _, lag := range []time.Duration{0, 3 * L} {
				synctest.Test(t, func(t *testing.T) {
					res, err := reconciletest.RunLatency(context.Background(), reconciletest.LatencyOptions{Pods: n, Indexed: indexed, Latency: L, EventLag: lag, Config: latencyConfig()})
					if err != nil {
						t.Fatal(err)
					}
					mode := "NonIndexed"
					if indexed {
						mode = "Indexed"
					}
					fmt.Printf("| %s | %d | %d L | %.1f L | %d | %d | %.3f |\n", mode, n, lag/L, res.InL, res.Syncs, res.Writes, res.WritesPerPod)
				})
			}
		}
	}
}

var latencyParallelism = flag.Int("latency.parallelism", 0, "FinalizerRemovalParallelism of the latency table")

func latencyConfig() reconcile.Config {
	return reconcile.Config{FinalizerRemovalParallelism: *latencyParallelism}
}
