package reconciletest_test

import (
	"context"
	"fmt"
	"strings"
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
// workers (the kube-controller-manager's default), every API call taking L:
// every Job completes (RunLatency fails otherwise), every pod is created once,
// the writes stay within upstream's count, and the percentiles of the time each
// Job took are ordered and bounded by the workers' throughput (a Job costs its
// worker about 7 L of calls, in two or three syncs); with -latency.table it prints
// the table of docs/performance.md "Many Jobs at once".
func TestLatencyManyJobs(t *testing.T) {
	sizes, modes := []int{100}, []bool{false, true}
	switch {
	case *latencyTable:
		sizes = []int{100, 1000, 10000}
	case testing.Short() || raceEnabled:
		sizes, modes = []int{20}, []bool{false}
	}
	const L, pods, workers = 10 * time.Millisecond, 10, 5
	if *latencyTable {
		fmt.Println()
		fmt.Println("| Jobs | mode | pods | event lag | p50 to Complete | p99 | all Complete | syncs | writes | writes/pod | upstream's count |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, indexed := range modes {
		for _, jobs := range sizes {
			for _, lag := range []time.Duration{0, 3 * L} {
				mode := "NonIndexed"
				if indexed {
					mode = "Indexed"
				}
				t.Run(fmt.Sprintf("%s/Jobs=%d/lag=%dL", mode, jobs, lag/L), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						res, err := reconciletest.RunLatency(context.Background(), reconciletest.LatencyOptions{
							Jobs: jobs, Pods: pods, Workers: workers, Indexed: indexed, Latency: L, EventLag: lag, Config: latencyConfig()})
						if err != nil {
							t.Fatal(err)
						}
						want := jobsMaxWrites(jobs, pods)
						if *latencyTable {
							fmt.Printf("| %d | %s | %d | %d L | %.0f L | %.0f L | %.0f L | %d | %d | %.3f | %d |\n",
								jobs, mode, res.Pods, lag/L, res.P50InL, res.P99InL, res.InL, res.Syncs, res.Writes, res.WritesPerPod, want)
						}
						at := fmt.Sprintf("%s Jobs=%d lag=%dL", mode, jobs, lag/L)
						if wantPods := jobs * (pods + 1) / 2; res.Pods != wantPods || res.Creates != wantPods {
							t.Errorf("%s: %d pods, %d created; want %d each", at, res.Pods, res.Creates, wantPods)
						}
						if res.Writes > want {
							t.Errorf("%s: %d API writes, upstream's count is %d", at, res.Writes, want)
						}
						bound := 8*float64(jobs)/workers + 10*float64(1+lag/L)
						if !(0 < res.P50InL && res.P50InL <= res.P99InL && res.P99InL <= res.InL && res.InL <= bound) {
							t.Errorf("%s: p50 %.1f L, p99 %.1f L, all %.1f L: want 0 < p50 <= p99 <= all <= %.0f L", at, res.P50InL, res.P99InL, res.InL, bound)
						}
					})
				})
			}
		}
	}
}

// RunLatency refuses options it cannot run, naming the field and its value.
func TestRunLatencyBadOptions(t *testing.T) {
	const L = 10 * time.Millisecond
	tests := []struct {
		name    string
		opts    reconciletest.LatencyOptions
		wantErr string
	}{
		{name: "no pods", opts: reconciletest.LatencyOptions{Latency: L}, wantErr: "LatencyOptions.Pods = 0"},
		{name: "negative Jobs", opts: reconciletest.LatencyOptions{Pods: 1, Jobs: -1, Latency: L}, wantErr: "LatencyOptions.Jobs = -1"},
		{name: "negative Workers", opts: reconciletest.LatencyOptions{Pods: 1, Workers: -2, Latency: L}, wantErr: "LatencyOptions.Workers = -2"},
		{name: "release of many Jobs", opts: reconciletest.LatencyOptions{Pods: 1, Jobs: 2, Indexed: true, Release: true, Latency: L}, wantErr: "Release runs one Job: Jobs = 2"},
		{name: "no latency", opts: reconciletest.LatencyOptions{Pods: 1}, wantErr: "LatencyOptions.Latency = 0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reconciletest.RunLatency(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("RunLatency(%s) = %v, want an error containing %q", tc.name, err, tc.wantErr)
			}
		})
	}
}
