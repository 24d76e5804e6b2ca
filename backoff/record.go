package backoff

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// AdvancePods returns r advanced by the pods that finished since r was computed:
// [plainbackoff.Record.Advance] where the finish time of each pod is [FinishTime].
// The caller decides which pods are newly succeeded and newly failed (the upstream
// controller passes pods that still carry the tracking finalizer and are not yet in
// uncountedTerminatedPods). The slices must not hold nil pods; neither the slices nor
// the pods are modified, and r is a value, so the caller's record is unchanged.
// Cost: O(number of pods × containers per pod), no allocation.
func AdvancePods(r plainbackoff.Record, succeeded, failed []*corev1.Pod) plainbackoff.Record {
	return plainbackoff.AdvanceFunc(r,
		len(succeeded), func(i int) (time.Time, bool) { return FinishTime(succeeded[i]), true },
		len(failed), func(i int) (time.Time, bool) { return FinishTime(failed[i]), true })
}

// FromPods rebuilds the job-wide backoff record of a Job from its pods that still
// exist, so that a restarted controller keeps its backoff (the upstream controller
// keeps the record in memory only and forgets it). Pods in phase Succeeded are
// successes, pods in phase Failed are failures, the others are ignored; the result is
// the record of the failures that finished strictly after the latest success, which
// equals AdvancePods(plainbackoff.Record{}, succeeded, failed).
//
// Pods deleted from the API are not seen, so the rebuilt Failures can be lower than
// the true count and LastFailure earlier; combine it with the stored record by
// [plainbackoff.Merge]. Use [FromPodsFunc] to count other pods as failures, as
// upstream does with terminating pods under the podReplacementPolicy
// TerminatingOrFailed.
//
// The caller passes the Job's pods. Upstream ignores the pods of an Indexed Job whose
// completion index is missing or not below completions; filter those out first.
//
// Cost: O(number of pods × containers per pod), no allocation; the pods are not
// modified. Nil entries are skipped.
func FromPods(pods []*corev1.Pod) plainbackoff.Record {
	return FromPodsFunc(pods, nil)
}

// FromPodsFunc is [FromPods] where isFailed decides which pods not in phase Succeeded
// count as failures. A nil isFailed means phase Failed. isFailed is called once per
// pod that is not Succeeded, never with nil.
func FromPodsFunc(pods []*corev1.Pod, isFailed func(*corev1.Pod) bool) plainbackoff.Record {
	if isFailed == nil {
		isFailed = phaseFailed
	}
	return plainbackoff.AdvanceFunc(plainbackoff.Record{},
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
		})
}

func phaseFailed(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed }
