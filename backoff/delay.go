package backoff

import (
	"time"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

const (
	// DefaultBase is the delay after the first failure: the pod failure backoff of the
	// Kubernetes 1.37 Job controller.
	DefaultBase = plainbackoff.DefaultBase
	// DefaultMax caps the delay; see [plainbackoff.DefaultMax].
	DefaultMax = plainbackoff.DefaultMax
)

// Policy holds the parameters of the exponential backoff; its zero value (and any
// zero or negative field) is the Job controller's default. See [plainbackoff.Policy].
type Policy = plainbackoff.Policy

// Delay returns how long to wait after the n-th consecutive failure before the next
// pod is created: base·2^(n-1), capped at max, as [plainbackoff.Policy.Delay].
//
// Unlike a [Policy], whose zero fields mean the defaults, Delay takes base <= 0 as
// "backoff disabled" and max <= 0 as "no room for a delay": both return 0. This form
// predates the plain layer and keeps its meaning; prefer Policy, which has one meaning
// of zero. It does not allocate.
func Delay(n int, base, max time.Duration) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	return Policy{Base: base, Max: max}.Delay(n)
}

// Remaining returns how much of Delay(n, base, max) is still left at now, given that
// the last failure finished at lastFailure, as [plainbackoff.Policy.Remaining]; base
// <= 0 or max <= 0 returns 0, as for [Delay].
func Remaining(n int, base, max time.Duration, lastFailure, now time.Time) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	return Policy{Base: base, Max: max}.Remaining(n, lastFailure, now)
}
