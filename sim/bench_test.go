package sim_test

import (
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/sim"
)

// BenchmarkRun measures one simulated run, cycling through the first 100 seeds
// (most Jobs are small, a few have hundreds of pods).
func BenchmarkRun(b *testing.B) {
	for _, rate := range []float64{0, 0.1} {
		b.Run(fmt.Sprintf("faults=%g", rate), func(b *testing.B) {
			b.ReportAllocs()
			seed := uint64(0)
			for b.Loop() {
				if _, err := sim.Run(sim.Config{Seed: seed % 100, FaultRate: rate}); err != nil {
					b.Fatal(err)
				}
				seed++
			}
		})
	}
}
