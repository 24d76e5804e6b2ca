package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/internal/sim"
)

// The default run handles events in the middle of pod lists, for Jobs and Tasks,
// and records each such sync in its trace so that the run replays; a run without
// faults never does.
func TestSimulationDeliversDuringList(t *testing.T) {
	n := uint64(60)
	if raceEnabled {
		n = 12
	}
	seeds := map[bool]int{} // by custom owner
	for seed := range n {
		cfg := sim.Config{Seed: seed, FaultRate: 0.1}
		if seed%4 == 3 {
			cfg.Owner = sim.TaskKind
		}
		res, err := sim.Run(cfg)
		require.NoError(t, err)
		require.True(t, res.OK(), "seed %d: %v", seed, res.Violations)
		armed := 0
		for _, a := range res.Trace.Actions {
			if a.DuringList != 0 {
				require.Equal(t, sim.VerbSync, a.Do, "seed %d: %v", seed, a)
				armed++
			}
		}
		require.GreaterOrEqual(t, armed, res.Faults[sim.FaultDuringList], "seed %d: each fault is a sync of the trace", seed)
		if res.Faults[sim.FaultDuringList] > 0 {
			seeds[cfg.Owner == sim.TaskKind]++
			again, err := sim.Replay(res.Trace)
			require.NoError(t, err)
			assert.Equal(t, res.Faults, again.Faults, "seed %d replays", seed)
			assert.Equal(t, res.Status, again.Status, "seed %d replays", seed)
		}

		calm, err := sim.Run(sim.Config{Seed: seed, Owner: cfg.Owner})
		require.NoError(t, err)
		require.Zero(t, calm.Faults[sim.FaultDuringList], "seed %d without faults", seed)
	}
	t.Logf("%d seeds: during-list in %d Job seeds, %d Task seeds", n, seeds[false], seeds[true])
	assert.Positive(t, seeds[false], "Job seeds with events during a list")
	if !raceEnabled {
		assert.Positive(t, seeds[true], "Task seeds with events during a list")
	}
}
