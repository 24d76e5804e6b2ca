package backoff

import (
	"math"
	"time"
)

// Record is what the job-wide backoff remembers about a Job's pods: how many failed
// in a row and when the last of them finished. The zero Record means no failure since
// the last success (or ever). Records are values; methods return a new Record and
// never modify their receiver.
type Record struct {
	// Failures counts the consecutive failures since the last success, the last one
	// included: the n of [Policy.Delay]. It saturates at math.MaxInt32.
	Failures int32
	// LastFailure is the latest finish time among the counted failures; zero when
	// Failures is 0.
	LastFailure time.Time
}

// IsZero reports whether r records no failure.
func (r Record) IsZero() bool {
	return r.Failures == 0 && r.LastFailure.IsZero()
}

// Remaining returns how long the creation of new pods waits at now under policy p:
// p.Remaining(r.Failures, r.LastFailure, now).
func (r Record) Remaining(p Policy, now time.Time) time.Duration {
	return p.Remaining(int(r.Failures), r.LastFailure, now)
}

// Advance returns the record after the pods that finished since r was computed:
// succeeded and failed hold their finish times, in any order.
//
//   - Nothing new: r unchanged.
//   - Only failures: they add to Failures, and LastFailure becomes the latest of them
//     (or stays, if r already holds a later one).
//   - Any success: the streak restarts at the latest new success. Only failures that
//     finished strictly after it count, and LastFailure is the latest of those (zero
//     if none). A failure that finished at the same instant as the latest success
//     does not count: a tie goes to the success, as upstream. API timestamps have
//     one-second precision, so ties do happen.
//
// The slices are not modified. Cost: O(len(succeeded)+len(failed)), no allocation.
func (r Record) Advance(succeeded, failed []time.Time) Record {
	return AdvanceFunc(r, len(succeeded), func(i int) (time.Time, bool) { return succeeded[i], true },
		len(failed), func(i int) (time.Time, bool) { return failed[i], true })
}

// AdvanceFunc is [Record.Advance] over the caller's own records of finished work,
// without building slices of times: succeededAt(i) for i in [0, nSucceeded) returns
// the finish time of the i-th success, failedAt(i) for i in [0, nFailed) that of the
// i-th failure, and each returns false for an entry that is to be skipped. Each
// accessor is called at most once per entry, all successes first, and is not kept.
// AdvanceFunc does not allocate.
func AdvanceFunc(r Record, nSucceeded int, succeededAt func(i int) (time.Time, bool), nFailed int, failedAt func(i int) (time.Time, bool)) Record {
	var lastSuccess time.Time
	anySuccess := false
	for i := range nSucceeded {
		if t, ok := succeededAt(i); ok && (!anySuccess || t.After(lastSuccess)) {
			lastSuccess, anySuccess = t, true
		}
	}
	out := r
	if anySuccess {
		out = Record{}
	}
	for i := range nFailed {
		t, ok := failedAt(i)
		if !ok || (anySuccess && !t.After(lastSuccess)) {
			continue
		}
		out.Failures = addSaturating(out.Failures, 1)
		if t.After(out.LastFailure) {
			out.LastFailure = t
		}
	}
	return out
}

func addSaturating(a int32, b int) int32 {
	if b >= math.MaxInt32-int(a) {
		return math.MaxInt32
	}
	return a + int32(b)
}

// Merge combines two records of the same Job, typically the one a controller kept in
// memory and one rebuilt from the pods that still exist, and returns the one that
// knows more: the one with the later LastFailure, or on equal LastFailure the one with
// more Failures. Merge is commutative.
//
// Why this rule: the stored record is empty after a restart and the rebuilt one misses
// deleted pods, but both describe the same history, so the later failure and the
// higher count are the better-informed values. When the stored record was reset by a
// success whose pod has since been deleted, the rebuilt record still shows the older
// failures and wins; the backoff then errs on the long side, never beyond the cap.
func Merge(a, b Record) Record {
	switch {
	case a.LastFailure.After(b.LastFailure):
		return a
	case b.LastFailure.After(a.LastFailure):
		return b
	case b.Failures > a.Failures:
		return b
	default:
		return a
	}
}
