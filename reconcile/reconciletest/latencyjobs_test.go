package reconciletest_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// jobsMaxWrites is upstream's count of API writes for the Jobs of
// LatencyOptions{Jobs: jobs, Pods: pods}: maxWrites of each.
func jobsMaxWrites(jobs, pods int) int {
	n := 0
	for i := range jobs {
		n += maxWrites(1 + i%pods)
	}
	return n
}

// TestLatencyManyJobs runs Jobs of 1 to 10 pods created at once, synced by 5
// workers, every API call taking L: every Job completes, within upstream's count
// of writes, with sane percentiles of the time each took; with -latency.table it
// prints the table of docs/performance.md "Many Jobs at once".
func TestLatencyManyJobs(t *testing.T) {
	sizes := []int{100}
	if *latencyTable {
		sizes = []int{100, 1000, 10000}
	}
	const L = 10 * time.Millisecond
	if *latencyTable {
		fmt.Println()
		fmt.Println("| Jobs | pods | event lag | p50 to Complete | p99 | all Complete | syncs | writes | writes/pod | upstream's count |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, indexed := range []bool{false} {
		for _, jobs := range sizes {
			for _, lag := range []time.Duration{0, 3 * L} {
				t.Run(fmt.Sprintf("Jobs=%d/lag=%dL", jobs, lag/L), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						start := time.Now()
						res, err := reconciletest.RunLatency(context.Background(), reconciletest.LatencyOptions{
							Jobs: jobs, Pods: 10, Indexed: indexed, Latency: L, EventLag: lag, Config: latencyConfig()})
						if err != nil {
							t.Fatal(err)
						}
						_ = start
						want := jobsMaxWrites(jobs, 10)
						if *latencyTable {
							fmt.Printf("| %d | %d | %d L | %.1f L | %.1f L | %.1f L | %d | %d | %.3f | %d |\n",
								jobs, res.Pods, lag/L, res.P50InL, res.P99InL, res.InL, res.Syncs, res.Writes, res.WritesPerPod, want)
						}
						t.Logf("%v; p50 %.1f L, p99 %.1f L", res, res.P50InL, res.P99InL)
						if res.Writes > want {
							t.Errorf("Jobs=%d lag=%v: %d API writes, upstream's count is %d", jobs, lag, res.Writes, want)
						}
						if !(0 < res.P50InL && res.P50InL <= res.P99InL && res.P99InL <= res.InL) {
							t.Errorf("Jobs=%d lag=%v: p50 %.1f L, p99 %.1f L, all %.1f L: want 0 < p50 <= p99 <= all", jobs, lag, res.P50InL, res.P99InL, res.InL)
						}
					})
				})
			}
		}
	}
}
