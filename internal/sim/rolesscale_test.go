package sim

import (
	"flag"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var flagRoleResizeSeeds = flag.Int("sim.roleresizeseeds", 0, "TestRoleResizes: how many roles seeds to run at fault rate 0.2 (0: 40)")

// TestRoleResizes runs roles seeds at fault rate 0.2 and checks every run,
// those whose workers are resized while they run among them (one in two,
// some restarted in place too), with 0 violations.
func TestRoleResizes(t *testing.T) {
	n := *flagRoleResizeSeeds
	if n == 0 {
		n = 40
	}
	var mu sync.Mutex
	var resized, inPlaceResized, completed int
	seeds := make(chan uint64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for seed := range seeds {
				res, err := RunRoles(RolesConfig{Seed: seed, FaultRate: 0.2})
				mu.Lock()
				require.NoError(t, err)
				assert.True(t, res.OK(), "roles seed %d: %s\nreplay: %s", seed, res.Summary(), RolesReplayCommand(seed, 0.2))
				if strings.Contains(res.Owner, "resized") {
					resized++
					if strings.Contains(res.Owner, "InPlaceRestart") {
						inPlaceResized++
					}
					if res.Status.TerminalState == "Completed" {
						completed++
					}
				}
				mu.Unlock()
			}
		})
	}
	for seed := range uint64(n) {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d roles seeds at 0.2: %d resized while running (%d restarted in place too, %d completed)", n, resized, inPlaceResized, completed)
	assert.Positive(t, resized, "some owner is resized while it runs")
	if n >= 40 {
		assert.Positive(t, inPlaceResized, "some owner is resized and restarted in place")
	}
}
