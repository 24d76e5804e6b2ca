package sim_test

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/internal/sim"
)

var flagGroupSeed = flag.Int64("sim.groupseed", -1, "run only the group of child Jobs of this seed (sim.RunChildJobs), with its summary")

// simulateChildJobs is TestSimulation's part for groups of child Jobs: the group
// of seeds first..first+n-1, each failing seed printed with the command that
// replays it.
func simulateChildJobs(t *testing.T, first uint64, n int, faultRate float64, report bool) {
	start := time.Now()
	var mu sync.Mutex
	var bad []*sim.ChildJobsResult
	syncs, completed, failed, restarts := 0, 0, 0, 0
	inPlace, inPlaceRestarts := 0, 0
	faults := sim.Counts{}
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range seeds {
				res, err := sim.RunChildJobs(sim.ChildJobsConfig{Seed: seed, FaultRate: faultRate})
				mu.Lock()
				if err != nil {
					t.Errorf("group seed %d: %v", seed, err)
				} else {
					syncs += res.Syncs
					faults.Add(res.Faults)
					restarts += int(res.Status.Restarts)
					if strings.Contains(res.Group, "InPlaceRestart") {
						inPlace++
						if c := res.Status.CurrentInPlaceRestartAttempt; c != nil {
							inPlaceRestarts += int(*c)
						}
					}
					switch {
					case !res.OK():
						bad = append(bad, res)
					case res.Status.TerminalState == "Completed":
						completed++
					case res.Status.TerminalState == "Failed":
						failed++
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		seeds <- first + uint64(i)
	}
	close(seeds)
	wg.Wait()
	sort.Slice(bad, func(i, j int) bool { return bad[i].Seed < bad[j].Seed })
	summary := fmt.Sprintf("simulation of groups of child Jobs: %d seeds in %v, syncs %d, completed %d, failed %d, group restarts %d; %d restarted in place, %d in-place restarts\n  faults injected (%d): %s\n  violations: %d",
		n, time.Since(start).Round(time.Millisecond), syncs, completed, failed, restarts, inPlace, inPlaceRestarts, faults.Total(), faults, len(bad))
	if report {
		fmt.Println(summary)
	} else {
		t.Log(summary)
	}
	for _, b := range bad {
		t.Errorf("group seed %d: %s\nreplay: %s", b.Seed, b.Violations[0], sim.ChildJobsReplayCommand(b.Seed, faultRate))
	}
}

// simulateGroupSeed runs -sim.groupseed alone, when set, and reports whether it did.
func simulateGroupSeed(t *testing.T, faultRate float64) bool {
	if *flagGroupSeed < 0 {
		return false
	}
	seed := uint64(*flagGroupSeed)
	res, err := sim.RunChildJobs(sim.ChildJobsConfig{Seed: seed, FaultRate: faultRate})
	require.NoError(t, err)
	t.Logf("group seed %d: %s", seed, res.Summary())
	if !res.OK() {
		t.Errorf("group seed %d: %v\nreplay: %s", seed, res.Violations[0], sim.ChildJobsReplayCommand(seed, faultRate))
	}
	return true
}

// A child-Jobs run is deterministic, ends finished without faults, and
// restarts at most as its failure policy allows.
func TestRunChildJobs(t *testing.T) {
	for _, seed := range []uint64{0, 1, 7} {
		a, err := sim.RunChildJobs(sim.ChildJobsConfig{Seed: seed, FaultRate: 0.2})
		require.NoError(t, err)
		b, err := sim.RunChildJobs(sim.ChildJobsConfig{Seed: seed, FaultRate: 0.2})
		require.NoError(t, err)
		assert.Equal(t, a.Summary(), b.Summary(), "seed %d", seed)
		assert.True(t, a.OK(), "seed %d: %s", seed, a.Summary())
	}
	for seed := range uint64(20) {
		res, err := sim.RunChildJobs(sim.ChildJobsConfig{Seed: seed})
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %s", seed, res.Summary())
		assert.NotEmpty(t, res.Status.TerminalState, "seed %d ends finished", seed)
		assert.Zero(t, res.Faults.Total(), "seed %d", seed)
	}
}
