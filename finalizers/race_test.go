//go:build race

package finalizers_test

// ledgerSeeds is how many seeds TestLedgerCountsEveryPodOnce runs per configuration:
// fewer under the race detector, which slows the simulation on reconciletest's
// Cluster severalfold and finds nothing more in it (it runs on one goroutine).
const ledgerSeeds = 5
