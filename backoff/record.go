package backoff

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Record is what the job-wide backoff remembers about a Job's pods: how many failed
// in a row and when the last of them finished. The zero Record means no failure since
// the last success (or ever). Records are values; methods return a new Record and
// never modify their receiver.
type Record struct {
	// Failures counts the consecutive pod failures since the last success. It is never
	// negative and saturates at math.MaxInt32.
	Failures int32
	// LastFailure is the finish time of the latest counted failure; zero when
	// Failures is 0.
	LastFailure time.Time
}

// IsZero reports whether r records no failure.
func (r Record) IsZero() bool {
	return r.Failures == 0 && r.LastFailure.IsZero()
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
	return r.advance(len(succeeded), func(i int) time.Time { return succeeded[i] },
		len(failed), func(i int) time.Time { return failed[i] })
}

// AdvancePods is [Record.Advance] for pods: the finish time of each pod is
// [FinishTime]. The caller decides which pods are newly succeeded and newly failed
// (the upstream controller passes pods that still carry the tracking finalizer and
// are not yet in uncountedTerminatedPods). The slices must not hold nil pods; neither
// the slices nor the pods are modified. Cost: O(number of pods × containers per pod),
// no allocation.
func (r Record) AdvancePods(succeeded, failed []*corev1.Pod) Record {
	return r.advance(len(succeeded), func(i int) time.Time { return FinishTime(succeeded[i]) },
		len(failed), func(i int) time.Time { return FinishTime(failed[i]) })
}

// advance implements Advance over indexed accessors so that times and pods share one
// definition; each accessor is called at most once per element.
func (r Record) advance(nSucceeded int, succeededAt func(int) time.Time, nFailed int, failedAt func(int) time.Time) Record {
	if nSucceeded == 0 {
		if nFailed == 0 {
			return r
		}
		out := r
		out.Failures = addSaturating(r.Failures, nFailed)
		for i := range nFailed {
			if t := failedAt(i); t.After(out.LastFailure) {
				out.LastFailure = t
			}
		}
		return out
	}
	lastSuccess := succeededAt(0)
	for i := 1; i < nSucceeded; i++ {
		if t := succeededAt(i); t.After(lastSuccess) {
			lastSuccess = t
		}
	}
	return countAfter(lastSuccess, nFailed, failedAt)
}

// countAfter builds the record of the failures that finished strictly after since.
func countAfter(since time.Time, nFailed int, failedAt func(int) time.Time) Record {
	var out Record
	for i := range nFailed {
		t := failedAt(i)
		if !t.After(since) {
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

// FromPods rebuilds a Record from the pods of a Job that still exist, so that a
// restarted controller keeps its backoff (the upstream controller keeps the record in
// memory only and forgets it). Pods in phase Succeeded are successes, pods in phase
// Failed are failures, the others are ignored; the result is the record of the
// failures that finished strictly after the latest success, which equals
// Record{}.AdvancePods(succeeded, failed).
//
// Pods deleted from the API are not seen, so the rebuilt Failures can be lower than
// the true count and LastFailure earlier; see [Merge]. Use [FromPodsFunc] to count
// other pods as failures, as upstream does with terminating pods under the
// podReplacementPolicy TerminatingOrFailed.
//
// The caller passes the Job's pods. Upstream ignores the pods of an Indexed Job whose
// completion index is missing or not below completions; filter those out first.
//
// Cost: O(number of pods × containers per pod), no allocation; the pods are not
// modified. Nil entries are skipped.
func FromPods(pods []*corev1.Pod) Record {
	return FromPodsFunc(pods, nil)
}

// FromPodsFunc is [FromPods] where isFailed decides which pods not in phase Succeeded
// count as failures. A nil isFailed means phase Failed. isFailed is called once per
// pod that is not Succeeded, never with nil.
func FromPodsFunc(pods []*corev1.Pod, isFailed func(*corev1.Pod) bool) Record {
	if isFailed == nil {
		isFailed = phaseFailed
	}
	var lastSuccess time.Time
	anySuccess := false
	for _, p := range pods {
		if p == nil || p.Status.Phase != corev1.PodSucceeded {
			continue
		}
		if t := FinishTime(p); !anySuccess || t.After(lastSuccess) {
			lastSuccess, anySuccess = t, true
		}
	}
	var out Record
	for _, p := range pods {
		if p == nil || p.Status.Phase == corev1.PodSucceeded || !isFailed(p) {
			continue
		}
		t := FinishTime(p)
		if anySuccess && !t.After(lastSuccess) {
			continue
		}
		out.Failures = addSaturating(out.Failures, 1)
		if t.After(out.LastFailure) {
			out.LastFailure = t
		}
	}
	return out
}

func phaseFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

// Merge combines two records of the same Job, typically the one a controller kept in
// memory and the one [FromPods] rebuilt, and returns the one that knows more: the one
// with the later LastFailure, or on equal LastFailure the one with more Failures.
// Merge is commutative.
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

// RemainingForRecord returns how long the creation of new pods of the Job waits at now
// under policy p: p.Remaining(rec.Failures, rec.LastFailure, now). The upstream
// controller applies it only to Jobs without backoffLimitPerIndex; with it, see
// [IndexRemaining].
func RemainingForRecord(rec Record, p Policy, now time.Time) time.Duration {
	return p.Remaining(int(rec.Failures), rec.LastFailure, now)
}
