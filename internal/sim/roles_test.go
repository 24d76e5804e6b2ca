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

var (
	flagRoleSeed = flag.Int64("sim.roleseed", -1, "run only the owner of two roles of this seed (sim.RunRoles), with its summary")
)

// simulateRoles is TestSimulation's part for owners of two roles: it runs the
// roles owner of seeds first..first+n-1 after the Jobs' (n as TestSimulation's)
// and prints a failing seed with the command that replays it.
func simulateRoles(t *testing.T, first uint64, n int, faultRate float64, report bool) {
	start := time.Now()
	var mu sync.Mutex
	var bad []*sim.RolesResult
	syncs, pods, completed, failed, restarts := 0, 0, 0, 0, 0
	inPlace, inPlaceRestarts, resized := 0, 0, 0
	faults := sim.Counts{}
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for seed := range seeds {
				res, err := sim.RunRoles(sim.RolesConfig{Seed: seed, FaultRate: faultRate})
				mu.Lock()
				if err != nil {
					t.Errorf("roles seed %d: %v", seed, err)
				} else {
					syncs, pods = syncs+res.Syncs, pods+res.Pods
					faults.Add(res.Faults)
					restarts += int(res.Status.Restarts)
					if strings.Contains(res.Owner, "resized") {
						resized++
					}
					if strings.Contains(res.Owner, "InPlaceRestart") {
						inPlace++
						if c := res.Status.InPlace.Current; c != nil {
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
	summary := fmt.Sprintf("simulation of owners of two roles: %d seeds in %v, syncs %d, pods %d, completed %d, failed %d, group restarts %d; %d restarted in place, %d in-place restarts, %d resized\n  faults injected (%d): %s\n  violations: %d",
		n, time.Since(start).Round(time.Millisecond), syncs, pods, completed, failed, restarts, inPlace, inPlaceRestarts, resized, faults.Total(), faults, len(bad))
	if report {
		fmt.Println(summary)
	} else {
		t.Log(summary)
	}
	for _, b := range bad {
		t.Errorf("roles seed %d: %s\nreplay: %s", b.Seed, b.Violations[0], sim.RolesReplayCommand(b.Seed, faultRate))
	}
}

// simulateRoleSeed runs -sim.roleseed alone, when set, and reports whether it did.
func simulateRoleSeed(t *testing.T, faultRate float64) bool {
	if *flagRoleSeed < 0 {
		return false
	}
	seed := uint64(*flagRoleSeed)
	res, err := sim.RunRoles(sim.RolesConfig{Seed: seed, FaultRate: faultRate})
	require.NoError(t, err)
	t.Logf("roles seed %d: %s", seed, res.Summary())
	if !res.OK() {
		t.Errorf("roles seed %d: %v\nreplay: %s", seed, res.Violations[0], sim.RolesReplayCommand(seed, faultRate))
	}
	return true
}

// A roles run is deterministic: a seed gives the same run twice, and different
// seeds draw different owners.
func TestRunRolesDeterministic(t *testing.T) {
	for _, seed := range []uint64{0, 1, 7} {
		a, err := sim.RunRoles(sim.RolesConfig{Seed: seed, FaultRate: 0.2})
		require.NoError(t, err)
		b, err := sim.RunRoles(sim.RolesConfig{Seed: seed, FaultRate: 0.2})
		require.NoError(t, err)
		assert.Equal(t, a.Summary(), b.Summary(), "seed %d", seed)
		assert.Equal(t, a.Status, b.Status, "seed %d", seed)
		assert.True(t, a.OK(), "seed %d: %s", seed, a.Summary())
		assert.NotEmpty(t, a.Status.TerminalState, "seed %d ends finished", seed)
	}
}

// Without faults a run completes or fails the group as its owner's rules say,
// with the launcher counted once when it completes.
func TestRunRolesNoFaults(t *testing.T) {
	for seed := range uint64(20) {
		res, err := sim.RunRoles(sim.RolesConfig{Seed: seed})
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %s", seed, res.Summary())
		assert.Zero(t, res.Faults.Total(), "seed %d", seed)
		if res.Status.TerminalState == "Completed" {
			assert.GreaterOrEqual(t, res.Status.Roles[1].Succeeded, int32(1), "seed %d: the launcher is counted", seed)
		}
	}
}
