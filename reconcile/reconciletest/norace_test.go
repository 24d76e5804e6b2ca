//go:build !race

package reconciletest_test

const raceEnabled = false
