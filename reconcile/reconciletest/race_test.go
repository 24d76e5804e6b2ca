//go:build race

package reconciletest_test

// raceEnabled: the race detector slows the latency runs tenfold; they run smaller.
const raceEnabled = true
