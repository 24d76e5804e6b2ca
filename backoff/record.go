package backoff

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Record is what the job-wide backoff remembers about a Job's pods: how many failed
// in a row and when the last of them finished. The zero Record means no failure since
// the last success (or ever). Records are values; methods return a new Record and
// never modify their receiver.
//
// It has the fields of [plainbackoff.Record] (convert with plainbackoff.Record(r) and
// Record(p), which copy nothing) and adds the methods that read pods.
type Record plainbackoff.Record

// IsZero reports whether r records no failure.
func (r Record) IsZero() bool { return plainbackoff.Record(r).IsZero() }

// Advance returns the record after the pods that finished since r was computed:
// succeeded and failed hold their finish times, in any order. The rule is
// [plainbackoff.Record.Advance]'s: only failures add up; any success restarts the
// streak at the latest success, and only failures strictly after it count (a tie goes
// to the success, as upstream).
//
// The slices are not modified. Cost: O(len(succeeded)+len(failed)), no allocation.
func (r Record) Advance(succeeded, failed []time.Time) Record {
	return Record(plainbackoff.Record(r).Advance(succeeded, failed))
}

// AdvancePods is [Record.Advance] for pods: the finish time of each pod is
// [FinishTime]. The caller decides which pods are newly succeeded and newly failed
// (the upstream controller passes pods that still carry the tracking finalizer and
// are not yet in uncountedTerminatedPods). The slices must not hold nil pods; neither
// the slices nor the pods are modified. Cost: O(number of pods × containers per pod),
// no allocation.
func (r Record) AdvancePods(succeeded, failed []*corev1.Pod) Record {
	return Record(plainbackoff.AdvanceFunc(plainbackoff.Record(r),
		len(succeeded), func(i int) (time.Time, bool) { return FinishTime(succeeded[i]), true },
		len(failed), func(i int) (time.Time, bool) { return FinishTime(failed[i]), true }))
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
	return Record(plainbackoff.AdvanceFunc(plainbackoff.Record{},
		len(pods), func(i int) (time.Time, bool) {
			if p := pods[i]; p != nil && p.Status.Phase == corev1.PodSucceeded {
				return FinishTime(p), true
			}
			return time.Time{}, false
		},
		len(pods), func(i int) (time.Time, bool) {
			if p := pods[i]; p != nil && p.Status.Phase != corev1.PodSucceeded && isFailed(p) {
				return FinishTime(p), true
			}
			return time.Time{}, false
		}))
}

func phaseFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }

// Merge combines two records of the same Job, typically the one a controller kept in
// memory and the one [FromPods] rebuilt, and returns the one that knows more; see
// [plainbackoff.Merge]. Merge is commutative.
func Merge(a, b Record) Record {
	return Record(plainbackoff.Merge(plainbackoff.Record(a), plainbackoff.Record(b)))
}

// RemainingForRecord returns how long the creation of new pods of the Job waits at now
// under policy p: p.Remaining(rec.Failures, rec.LastFailure, now). The upstream
// controller applies it only to Jobs without backoffLimitPerIndex; with it, see
// [IndexRemaining].
func RemainingForRecord(rec Record, p Policy, now time.Time) time.Duration {
	return plainbackoff.Record(rec).Remaining(p, now)
}
