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

// Policy holds the parameters of the exponential backoff. Zero means the default: the
// zero Policy is the Kubernetes 1.37 Job controller's (DefaultBase, DefaultMax), and so
// is any zero or negative field. There is no "no backoff" Policy.
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

// Delay returns how long to wait after the n-th consecutive failure (n counts the
// failures so far, the last one included) before the next pod is created:
// Base·2^(n-1), capped at Max. n <= 0 (no failure) gives 0.
//
// The result is in [0, Max] and never decreases as n grows; a huge n returns Max
// instead of overflowing. When Base > Max every n >= 1 gets Max (the upstream
// controller returns Base for n = 1 in that case). It does not allocate.
func (p Policy) Delay(n int) time.Duration {
	base, max := p.base(), p.max()
	if n <= 0 {
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

// Remaining returns how much of Delay(n) is still left at now, given that the last
// failure finished at lastFailure: Delay minus the time elapsed since lastFailure, and
// never below 0.
//
// A lastFailure after now (the node's clock that stamped the finish time runs ahead of
// the caller's clock) counts as no time elapsed, so the result never exceeds the full
// Delay. A zero lastFailure counts as long ago and yields 0. It does not allocate.
func (p Policy) Remaining(n int, lastFailure, now time.Time) time.Duration {
	d := p.Delay(n)
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

// indexFailures returns the consecutive failures of an index of a Job with
// backoffLimitPerIndex whose last failed pod recorded failed earlier failures that
// count towards the limit and ignored earlier failures matched by an Ignore rule: the
// pod itself plus both counts, failed + ignored + 1. It is computed in int (no int32
// overflow), and a negative count counts 0.
func indexFailures(failed, ignored int32) int {
	return max(int(failed), 0) + max(int(ignored), 0) + 1
}

// IndexRemaining returns how long the replacement pod of an index waits at now: p's
// Remaining for failed + ignored + 1 failures (the pod itself plus both counts,
// computed in int; a negative count counts 0), the last of which finished at
// lastFailure (the finish time of the index's last failed pod).
func (p Policy) IndexRemaining(failed, ignored int32, lastFailure, now time.Time) time.Duration {
	return p.Remaining(indexFailures(failed, ignored), lastFailure, now)
}
