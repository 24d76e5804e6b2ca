//go:build linux

package plan

import (
	"syscall"
	"time"
)

// tbThreadCPU is the CPU time (user and system) the calling thread has used, or 0
// when it cannot be read.
func tbThreadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
