package main

import (
	"fmt"
	"runtime/debug"
)

// The garbage collector's settings of the command (--gc-percent, --memory-limit-mib).
// Most of the controller's peak memory above its live heap is the collector's
// headroom: at the Go default (GOGC=100) the heap may grow to twice what is live
// before a collection, and the decode garbage of the pod watch fills it. A lower
// target trades the collector's CPU for memory.

// defaultGCPercent is --gc-percent's default.
const defaultGCPercent = 50

// gcSettings are the collector's target and soft memory limit to apply.
type gcSettings struct {
	percent     int // debug.SetGCPercent; negative turns the collector off
	memoryLimit int // MiB, debug.SetMemoryLimit; 0 means none
}

// validate checks the flags' values.
func (g gcSettings) validate() error {
	if g.memoryLimit < 0 {
		return fmt.Errorf("--memory-limit-mib=%d: must not be negative (0 means no limit)", g.memoryLimit)
	}
	if g.percent < 0 && g.memoryLimit == 0 {
		return fmt.Errorf("--gc-percent=%d: a negative target turns the collector off, which needs --memory-limit-mib", g.percent)
	}
	return nil
}

// apply sets the collector's target and limit, except those the environment sets
// (GOGC, GOMEMLIMIT: the Go runtime's own variables win), and returns what it set,
// for the log.
func (g gcSettings) apply(getenv func(string) string) []any {
	var set []any
	if getenv("GOGC") == "" {
		debug.SetGCPercent(g.percent)
		set = append(set, "gcPercent", g.percent)
	}
	if getenv("GOMEMLIMIT") == "" && g.memoryLimit > 0 {
		debug.SetMemoryLimit(int64(g.memoryLimit) << 20)
		set = append(set, "memoryLimitMiB", g.memoryLimit)
	}
	return set
}
