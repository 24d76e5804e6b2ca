package reconcile

import (
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/owner"
)

// PodEventType is the kind of an informer event about a pod.
type PodEventType int

// Pod event types.
const (
	PodAdded PodEventType = iota + 1
	PodUpdated
	PodDeleted
)

// String returns "add", "update" or "delete".
func (t PodEventType) String() string {
	switch t {
	case PodAdded:
		return "add"
	case PodUpdated:
		return "update"
	case PodDeleted:
		return "delete"
	}
	return "unknown"
}

// PodEvent is an informer event about a pod.
//
// For PodAdded, New is the pod. For PodUpdated, Old and New are the pod before and
// after. For PodDeleted, Old is the last state known: with client-go, a delete handler
// may receive a cache.DeletedFinalStateUnknown tombstone instead of a pod (the delete
// was missed and found on a relist); pass its Obj, when it is a *corev1.Pod, as Old.
// The pods are read, never modified.
type PodEvent struct {
	Type PodEventType
	Old  *corev1.Pod
	New  *corev1.Pod
}

// JobTarget is a Job concerned by a pod event, with what the event tells its
// expectations.
type JobTarget struct {
	// Key is the Job's "namespace/name"; UID is the UID in the pod's controller
	// reference, which the Job under Key must have for the event to concern it.
	Key string
	UID types.UID
	// PodUID is the UID of the pod of the event.
	PodUID types.UID
	// CreationObserved: a pod of the Job appeared (expectations.CreationObserved).
	CreationObserved bool
	// DeletionObserved: the pod is being deleted or is gone
	// (expectations.DeletionObserved).
	DeletionObserved bool
	// FinalizerRemovalObserved: the pod no longer carries the tracking finalizer, or
	// is gone (FinalizerRemovals.Observed).
	FinalizerRemovalObserved bool
}

// PodEventMapping is what a pod event means for the Job controller.
type PodEventMapping struct {
	// Jobs are the Jobs to sync: the Job controlling the pod, and the one that
	// controlled it before when the controller reference changed (old first).
	Jobs []JobTarget
	// Delay is when to sync them: pod events are batched for the batch period.
	Delay time.Duration
	// Adoptable is true for a pod without controller, not being deleted, that was
	// added or whose labels or controller changed: the Jobs whose selector matches it
	// should be synced so that one may adopt it.
	Adoptable bool
	// Orphan is true when the pod has no controller at all and carries the tracking
	// finalizer: queue it for the orphan cleanup (CleanOrphan).
	Orphan bool
	// TrackingFinalizer is "add" or "delete" when the event
	// makes a finished pod gain or lose the tracking finalizer (the metric
	// terminated_pods_tracking_finalizer_total), or empty.
	TrackingFinalizer string
}

// MapPodEvent maps a pod event to the owners of kind to sync and the expectations it fulfils,
// with batchPeriod as the delay, as upstream's pod event handlers do:
//
//   - add: a pod controlled by a Job fulfils a creation, or a deletion when it
//     already has a deletionTimestamp (a controller restarted while it was being
//     deleted; it must not count as a creation);
//   - update: ignored when the resourceVersion did not change (a resync); a
//     deletionTimestamp fulfils a deletion; a pod without the tracking finalizer
//     fulfils its finalizer removal; when the controller reference changed, the old
//     controller is synced too;
//   - delete: fulfils the deletion and the finalizer removal.
//
// Only controller references to owners of kind count (owner.BatchJob: Jobs of the
// batch group), and kind's tracking finalizer is the one looked at; the "Jobs" of the
// mapping are those owners. The function is pure and
// allocates only the Jobs slice and their keys.
func MapPodEvent(kind owner.Kind, ev PodEvent, batchPeriod time.Duration) PodEventMapping {
	var m PodEventMapping
	switch ev.Type {
	case PodAdded:
		pod := ev.New
		if pod == nil {
			return m
		}
		m.TrackingFinalizer = trackingFinalizerChange(kind, nil, pod)
		deleting := pod.DeletionTimestamp != nil
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			if kind.Matches(ref) {
				m.Jobs = []JobTarget{{
					Key: Key(pod.Namespace, ref.Name), UID: ref.UID, PodUID: pod.UID,
					CreationObserved:         !deleting,
					DeletionObserved:         deleting,
					FinalizerRemovalObserved: !kind.HasFinalizer(pod),
				}}
			}
		} else {
			m.Adoptable = !deleting
			m.Orphan = kind.HasFinalizer(pod)
		}
	case PodUpdated:
		cur, old := ev.New, ev.Old
		if cur == nil {
			return m
		}
		if old == nil {
			old = &corev1.Pod{}
		} else if cur.ResourceVersion != "" && old.ResourceVersion == cur.ResourceVersion {
			return m
		}
		m.TrackingFinalizer = trackingFinalizerChange(kind, old, cur)
		deleting := cur.DeletionTimestamp != nil
		removed := !kind.HasFinalizer(cur)
		oldRef, curRef := metav1.GetControllerOfNoCopy(old), metav1.GetControllerOfNoCopy(cur)
		refChanged := !sameRef(oldRef, curRef)
		if refChanged && oldRef != nil && kind.Matches(oldRef) {
			m.Jobs = append(m.Jobs, JobTarget{
				Key: Key(old.Namespace, oldRef.Name), UID: oldRef.UID, PodUID: cur.UID,
				DeletionObserved: deleting, FinalizerRemovalObserved: removed,
			})
		}
		if curRef != nil {
			if kind.Matches(curRef) {
				m.Jobs = append(m.Jobs, JobTarget{
					Key: Key(cur.Namespace, curRef.Name), UID: curRef.UID, PodUID: cur.UID,
					DeletionObserved: deleting, FinalizerRemovalObserved: removed,
				})
			}
		} else {
			m.Adoptable = !deleting && (refChanged || !maps.Equal(old.Labels, cur.Labels))
			m.Orphan = !removed
		}
	case PodDeleted:
		pod := ev.Old
		if pod == nil {
			pod = ev.New
		}
		if pod == nil {
			return m
		}
		m.TrackingFinalizer = trackingFinalizerChange(kind, pod, nil)
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			if kind.Matches(ref) {
				m.Jobs = []JobTarget{{
					Key: Key(pod.Namespace, ref.Name), UID: ref.UID, PodUID: pod.UID,
					DeletionObserved: true, FinalizerRemovalObserved: true,
				}}
			}
		} else {
			// A tombstone may show a finalizer the pod lost since; the orphan cleanup
			// looks the pod up and finds it gone.
			m.Orphan = kind.HasFinalizer(pod)
		}
	}
	if len(m.Jobs) > 0 || m.Adoptable {
		m.Delay = batchPeriod
	}
	return m
}

func sameRef(a, b *metav1.OwnerReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.Name == b.Name && a.Kind == b.Kind && a.APIVersion == b.APIVersion
}

// finishedWithFinalizer reports whether pod is terminal and carries the tracking
// finalizer.
func finishedWithFinalizer(kind owner.Kind, pod *corev1.Pod) bool {
	return podutil.IsTerminal(pod) && kind.HasFinalizer(pod)
}

func trackingFinalizerChange(kind owner.Kind, old, cur *corev1.Pod) string {
	was, is := finishedWithFinalizer(kind, old), finishedWithFinalizer(kind, cur)
	switch {
	case was == is:
		return ""
	case is:
		return labelFinalizerAdd
	default:
		return labelFinalizerDelete
	}
}

// PodEventResult is what ObservePodEvent asks the caller to do.
type PodEventResult struct {
	// Sync holds the keys of the Jobs to sync after Delay.
	Sync  []string
	Delay time.Duration
	// Adoptable: sync, after Delay, the owners whose selector matches the pod (and
	// that are in its namespace and not being deleted).
	Adoptable bool
	// OrphanCleanup: the pod carries the tracking finalizer and no live, unfinished
	// Job counts it (no controller, its Job is gone, replaced or finished); queue it
	// for CleanOrphan.
	OrphanCleanup bool
}

// OwnerLookup returns what the caller's cache shows of the owner namespace/name
// (its UID and whether it has finished; see finalizers.OrphanOwner, and
// finalizers.JobOwner for a batch/v1 Job), or nil when the cache has no such owner.
type OwnerLookup func(namespace, name string) *finalizers.OrphanOwner

// ObservePodEvent applies a pod event to the Reconciler's expectations and finalizer
// removals (MapPodEvent with Config.Owner) and returns what to enqueue. lookup
// resolves the owners named by controller references in the caller's cache: an
// owner that is missing or has another UID than the reference is not concerned (a
// pod of a deleted owner must not fulfil the expectations of a new one with the same
// name), and a finished owner is not synced; in both cases the pod goes to the
// orphan cleanup if it carries the finalizer. A nil lookup trusts the UID the
// Reconciler last synced under the key.
//
// Delay is Config.PodEventBatchPeriod, grown with the owner's size
// (Config.PodEventBatchPods) when the event observes no creation or deletion.
//
// It also reports terminated_pods_tracking_finalizer_total to the Metrics. It is
// safe for concurrent use.
func (r *Reconciler) ObservePodEvent(ev PodEvent, lookup OwnerLookup) PodEventResult {
	m := MapPodEvent(r.cfg.Owner, ev, r.cfg.PodEventBatchPeriod)
	if m.TrackingFinalizer != "" {
		r.cfg.Metrics.TerminatedPodsTrackingFinalizer(m.TrackingFinalizer)
	}
	out := PodEventResult{Delay: m.Delay, Adoptable: m.Adoptable, OrphanCleanup: m.Orphan}
	pod := ev.New
	if ev.Type == PodDeleted || pod == nil {
		pod = ev.Old
	}
	counts := true // no synced target observes a creation or a deletion
	for _, t := range m.Jobs {
		live, finished := true, false
		if lookup != nil {
			ns, name, _ := strings.Cut(t.Key, "/")
			own := lookup(ns, name)
			live = own != nil && own.UID == t.UID
			finished = live && own.Finished
		} else if uid, ok := r.knownUID(t.Key); ok && uid != t.UID {
			live = false
		}
		if (!live || finished) && r.cfg.Owner.HasFinalizer(pod) {
			out.OrphanCleanup = true
		}
		if !live {
			continue
		}
		r.observe(t)
		if !finished && (len(out.Sync) == 0 || out.Sync[len(out.Sync)-1] != t.Key) {
			out.Sync = append(out.Sync, t.Key)
			counts = counts && !t.CreationObserved && !t.DeletionObserved
		}
	}
	if len(out.Sync) == 0 && !out.Adoptable {
		out.Delay = 0
	} else if counts && !out.Adoptable {
		// Only counts change: the period grown with the owners' size, the
		// shortest of them (Config.PodEventBatchPods).
		for i, k := range out.Sync {
			if d := r.batchPeriod(k); i == 0 || d < out.Delay {
				out.Delay = d
			}
		}
	}
	return out
}

// observe applies the observations of one target.
func (r *Reconciler) observe(t JobTarget) {
	if t.CreationObserved {
		r.cfg.Expectations.CreationObserved(t.Key)
	}
	if t.DeletionObserved {
		r.cfg.Expectations.DeletionObserved(t.Key, t.PodUID)
	}
	if t.FinalizerRemovalObserved {
		r.cfg.FinalizerRemovals.Observed(t.Key, t.PodUID)
	}
}
