package reconcile

import (
	"time"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plan"
)

// The events of owners, of any kind: the one rule for spec changes, UID changes,
// finishing and deletion.

// OwnerEvent is an informer event about an owner, converted (plan.JobWorkload for a
// batch/v1 Job). Old is the owner before the event and New after: an addition has
// only New, an update both, a deletion only Old (the last state known; with
// client-go, the Obj of a cache.DeletedFinalStateUnknown tombstone). The workloads
// are read, never modified.
type OwnerEvent struct {
	Old, New *plan.Workload
}

// OwnerEventResult is what ObserveOwnerEvent asks the caller to do.
type OwnerEventResult struct {
	// Key is the owner's key; empty when the event carries no owner.
	Key string
	// Sync asks for a sync of Key after Delay: additions, spec changes (Generation
	// changed) and owners recreated under the name sync at once, status or metadata
	// changes (the controller's own status writes among them) after the batch
	// period, so that the pod events of the sync that wrote arrive first. A deletion
	// asks for no sync. The caller filters out owners it does not manage.
	Sync  bool
	Delay time.Duration
	// OrphanCleanup, when not nil, is the owner whose pods that carry the tracking
	// finalizer go to the orphan cleanup (CleanOrphan): the owner deleted or
	// replaced by one with a new UID (Old), or the one that has just finished (New).
	OrphanCleanup *plan.Workload
	// Gone says that OrphanCleanup no longer exists (deleted or replaced): its
	// state was forgotten, and its pods may be given to CleanOrphan with
	// finalizers.OrphanOwner{Gone: true}, which needs no live read.
	Gone bool
}

// ObserveOwnerEvent applies an owner event and returns what to enqueue, as
// upstream's Job event handlers do, for owners of any kind:
//
//   - addition (no Old): sync at once;
//   - update with a new UID (the owner was deleted and recreated under its name):
//     forget the old owner's state, sync at once, clean the old owner's orphans;
//   - update of the spec (Generation changed): sync at once;
//   - any other update: sync after Config.PodEventBatchPeriod, grown with the
//     owner's size (Config.PodEventBatchPods); when the owner has
//     just finished (a Complete or Failed condition True in New.Status and not in
//     Old.Status), clean its orphans;
//   - deletion (no New): forget the owner's state, clean its orphans, no sync.
//
// The state is forgotten by UID, so that a late event never wipes the state of an
// owner recreated under the same name and already synced (its expectations above
// all). A caller that knows only that an owner is gone (a cache miss with the
// owner's UID remembered) passes OwnerEvent{Old: &plan.Workload{Namespace, Name,
// UID}}; without a UID, Forget. The
// active deadline needs no timer here: the sync that follows a spec change requeues
// itself for the deadline (Result.RequeueAfter). It is safe for concurrent use.
func (r *Reconciler) ObserveOwnerEvent(ev OwnerEvent) OwnerEventResult {
	old, cur := ev.Old, ev.New
	var res OwnerEventResult
	switch {
	case cur == nil && old == nil:
	case cur == nil:
		res.Key, res.OrphanCleanup, res.Gone = workloadKey(old), old, true
		r.forgetUID(res.Key, old.UID)
	case old == nil:
		res.Key, res.Sync = workloadKey(cur), true
	case old.UID != cur.UID:
		res.Key, res.Sync = workloadKey(cur), true
		res.OrphanCleanup, res.Gone = old, true
		r.forgetUID(workloadKey(old), old.UID)
	default:
		res.Key, res.Sync = workloadKey(cur), true
		if old.Generation == cur.Generation {
			res.Delay = r.batchPeriod(res.Key)
		}
		_, wasDone := jobstatus.Finished(&old.Status)
		if _, done := jobstatus.Finished(&cur.Status); done && !wasDone {
			res.OrphanCleanup = cur
		}
	}
	return res
}
