package sim_test

import (
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/internal/sim"
	"github.com/jobkit/jobkit/owner"
)

// BenchmarkRun measures one simulated run, cycling through the first 100 seeds
// (most Jobs are small, a few have hundreds of pods), with a batch/v1 Job and with
// the custom owner (sim.TaskKind).
func BenchmarkRun(b *testing.B) {
	for _, rate := range []float64{0, 0.1} {
		b.Run(fmt.Sprintf("faults=%g", rate), func(b *testing.B) { benchmarkRun(b, rate, owner.Kind{}) })
	}
	b.Run("faults=0.1/owner=Task", func(b *testing.B) { benchmarkRun(b, 0.1, sim.TaskKind) })
}

func benchmarkRun(b *testing.B, rate float64, kind owner.Kind) {
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		if _, err := sim.Run(sim.Config{Seed: seed % 100, FaultRate: rate, Owner: kind}); err != nil {
			b.Fatal(err)
		}
		seed++
	}
}
