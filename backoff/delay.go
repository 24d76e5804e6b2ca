package backoff

import (
	"math/bits"
	"time"
)

const (
	// DefaultBase is the delay after the first failure: the pod failure backoff of the
	// Kubernetes 1.37 Job controller.
	DefaultBase = 10 * time.Second
	// DefaultMax caps the delay. The Job controller of Kubernetes 1.37 uses 10 minutes;
	// the Kubernetes documentation still says six minutes, which is out of date.
	DefaultMax = 10 * time.Minute
)

// Delay returns how long to wait after the n-th consecutive failure before the next
// pod is created: base·2^(n-1), capped at max.
//
// It returns 0 when n <= 0 (no failure, no wait), when base <= 0 (backoff disabled)
// or when max <= 0 (a non-positive cap leaves no room for a delay). The result is
// always in [0, max(max, 0)] and never decreases as n grows; a huge n returns max
// instead of overflowing. When base > max every n >= 1 gets max (the upstream
// controller returns base for n = 1 in that case; see the package doc).
// It does not allocate.
func Delay(n int, base, max time.Duration) time.Duration {
	if n <= 0 || base <= 0 || max <= 0 {
		return 0
	}
	if base >= max {
		return max
	}
	shift := uint(n - 1)
	// base < max here, so base<<shift overflows only when it also passes max; comparing
	// against max>>shift decides without computing the product.
	if shift >= bits.UintSize-1 || base > max>>shift {
		return max
	}
	return base << shift
}

// Remaining returns how much of Delay(n, base, max) is still left at now, given that
// the last failure finished at lastFailure: Delay minus the time elapsed since
// lastFailure, and never below 0.
//
// A lastFailure after now (the node's clock that stamped the finish time runs ahead of
// the caller's clock) counts as no time elapsed, so the result never exceeds the full
// Delay. A zero lastFailure counts as long ago and yields 0.
func Remaining(n int, base, max time.Duration, lastFailure, now time.Time) time.Duration {
	d := Delay(n, base, max)
	if d == 0 {
		return 0
	}
	elapsed := now.Sub(lastFailure) // saturates instead of overflowing
	if elapsed <= 0 {
		return d
	}
	if elapsed >= d {
		return 0
	}
	return d - elapsed
}

// Policy holds the parameters of the exponential backoff. The zero value is the
// Kubernetes 1.37 Job controller's policy (DefaultBase, DefaultMax).
type Policy struct {
	// Base is the delay after the first failure; zero or negative means DefaultBase.
	Base time.Duration
	// Max caps the delay; zero or negative means DefaultMax. A Max below Base caps
	// every delay at Max.
	Max time.Duration
}

// base returns the effective Base of p.
func (p Policy) base() time.Duration {
	if p.Base <= 0 {
		return DefaultBase
	}
	return p.Base
}

// max returns the effective Max of p.
func (p Policy) max() time.Duration {
	if p.Max <= 0 {
		return DefaultMax
	}
	return p.Max
}

// Delay is [Delay] with the effective Base and Max of p.
func (p Policy) Delay(n int) time.Duration {
	return Delay(n, p.base(), p.max())
}

// Remaining is [Remaining] with the effective Base and Max of p.
func (p Policy) Remaining(n int, lastFailure, now time.Time) time.Duration {
	return Remaining(n, p.base(), p.max(), lastFailure, now)
}
