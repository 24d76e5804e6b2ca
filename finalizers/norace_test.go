//go:build !race

package finalizers_test

// ledgerSeeds is how many seeds TestLedgerCountsEveryPodOnce runs per configuration.
const ledgerSeeds = 20
