//go:build !linux

package plan

import "time"

// tbThreadCPU is the CPU time the calling thread has used; 0: unknown here.
func tbThreadCPU() time.Duration { return 0 }
