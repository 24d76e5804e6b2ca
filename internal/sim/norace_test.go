//go:build !race

package sim_test

// raceEnabled is true under the race detector, which slows a run about tenfold.
const raceEnabled = false
