package backoff

import (
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/owner"
)

// FinishTime returns when a finished pod finished, taken from the first of these
// sources that is available:
//
//  1. the latest status.containerStatuses[*].state.terminated.finishedAt, together
//     with the statuses of the sidecars (init containers whose spec has
//     restartPolicy Always), which stop after the regular containers; used only when
//     at least one such status exists and every one of them is terminated with a
//     non-zero finishedAt;
//  2. the lastTransitionTime of the PodReady condition when its status is False (the
//     kubelet sets it when the pod turns terminal);
//  3. metadata.deletionTimestamp minus metadata.deletionGracePeriodSeconds (pods that
//     never ran to the end, such as orphans removed by the pod garbage collector);
//  4. metadata.creationTimestamp.
//
// FinishTime is pure: it reads no clock, does not modify the pod and does not
// allocate. It does not check the pod phase; callers pass pods they know to be
// finished. The pod must not be nil.
func FinishTime(pod *corev1.Pod) time.Time {
	if t, ok := containersFinishTime(pod); ok {
		return t
	}
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type != corev1.PodReady {
			continue
		}
		// Only the first PodReady condition counts, as with the API helpers.
		if c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
		break
	}
	if pod.DeletionTimestamp != nil {
		return pod.DeletionTimestamp.Add(-gracePeriod(pod.DeletionGracePeriodSeconds))
	}
	return pod.CreationTimestamp.Time
}

// gracePeriod converts deletionGracePeriodSeconds to a Duration without overflowing.
func gracePeriod(seconds *int64) time.Duration {
	if seconds == nil || *seconds <= 0 {
		return 0
	}
	const maxSeconds = int64(math.MaxInt64 / time.Second)
	return time.Duration(min(*seconds, maxSeconds)) * time.Second
}

// containersFinishTime returns the latest finishedAt of the regular containers and the
// sidecars, and false unless there is at least one such status and all are finished.
func containersFinishTime(pod *corev1.Pod) (time.Time, bool) {
	var latest time.Time
	seen := false
	for i := range pod.Status.ContainerStatuses {
		t, ok := terminatedAt(&pod.Status.ContainerStatuses[i])
		if !ok {
			return time.Time{}, false
		}
		seen = true
		if t.After(latest) {
			latest = t
		}
	}
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		if !podutil.IsSidecarStatus(pod, i, cs.Name) {
			continue
		}
		t, ok := terminatedAt(cs)
		if !ok {
			return time.Time{}, false
		}
		seen = true
		if t.After(latest) {
			latest = t
		}
	}
	return latest, seen
}

// terminatedAt returns the finishedAt of a terminated container, and false if the
// container is not terminated or the time is missing.
func terminatedAt(cs *corev1.ContainerStatus) (time.Time, bool) {
	term := cs.State.Terminated
	if term == nil || term.FinishedAt.IsZero() {
		return time.Time{}, false
	}
	return term.FinishedAt.Time, true
}

// LaterFailure reports whether failed pod a is a later failure of its index than
// failed pod b, both pods of an owner of kind: a has recorded at least as many
// earlier failures of the index (indexes.PodFailureCount, Failed + Ignored) and
// finished no earlier (FinishTime). Of an index's failed pods, the one no other is
// later than is the one whose replacement is due, and whose finish time the
// per-index backoff counts from. Unreadable counts count 0, as PodFailureCount says.
func LaterFailure(kind owner.Kind, a, b *corev1.Pod) bool {
	fa, _ := indexes.PodFailureCount(kind, a)
	fb, _ := indexes.PodFailureCount(kind, b)
	return fb.Total() <= fa.Total() && !FinishTime(a).Before(FinishTime(b))
}
