package reconcile

// The pod calls of a sync, shared by Sync and SyncRoles: finalizer removals,
// deletions (create.go holds the creations). They read the owner's identity and the
// calls from the execution (execution.owner, execution.calls), never a plan.

import (
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/plan"
)

// podOwner is what the pod calls know of their owner.
type podOwner struct {
	uid types.UID
	// object is what events are recorded on.
	object runtime.Object
	// base returns the name that the pod names of c's index derive from
	// (indexes.PodName's jobName): the owner's for a Job, "<owner>-<role>" for a
	// role of a ownedpods.Workload.
	base func(c plan.Creation) string
	// reason returns the reason label of c in job_pods_creation_total.
	reason func(c plan.Creation) string
}

// podCalls are the pod calls of a plan, in the order they are made: finalizer
// removals, deletions, creations.
type podCalls struct {
	remove []plan.PodAction
	del    []plan.Deletion
	create []plan.Creation
}

// removeFinalizers sends the finalizer removal patches of the plan, at most
// FinalizerRemovalParallelism at a time, and returns the UIDs whose removal the API
// server accepted (or whose pod is gone).
func (ex *execution) removeFinalizers() sets.Set[types.UID] {
	actions := ex.calls.remove
	removed := sets.New[types.UID]()
	var mu sync.Mutex
	ex.parallel(len(actions), func(i int) {
		pod := actions[i].Pod
		out, err := ex.removeFinalizer(pod, false)
		switch {
		case out == podChanged:
			// A pod being deleted changed since the cache showed it (the garbage
			// collector or a kubelet wrote it): the cache will show the new version,
			// and the next sync counts the pod by it. Not a failure of the sync.
			ex.log.V(2).Info("Pod changed since the plan; its finalizer stays for the next sync", "pod", pod.Name)
			ex.retry("a pod changed since the plan before its finalizer removal")
			return
		case err != nil:
			ex.fail(fmt.Errorf("remove tracking finalizer of pod %s/%s: %w", pod.Namespace, pod.Name, err))
			return
		}
		mu.Lock()
		removed.Insert(pod.UID)
		if out == finalizerRemoved {
			ex.res.FinalizersRemoved++
		}
		mu.Unlock()
	})
	return removed
}

// removalOutcome is what became of a finalizer removal.
type removalOutcome int

const (
	finalizerRemoved removalOutcome = iota // the API server accepted the patch
	podGone                                // the pod is gone (or replaced)
	// podChanged: refused with a Conflict on the resourceVersion precondition: the
	// pod changed since the cache showed it, or an earlier removal is not in the
	// cache yet. Nothing changed; a sync from a fresher cache decides again.
	podChanged
	removalFailed
)

// removeFinalizer removes the tracking finalizer of pod, raising the finalizer
// expectation first and lowering it on failure. The expectation of a pod found gone
// is left to the delete event, or to the pruning of pods no longer listed: until
// then, a stale cache may still show the pod with its finalizer.
//
// With keepUncertain, a failure that leaves unknown whether the patch was applied
// (a timeout, a lost answer) keeps the expectation: the pod is treated as without
// the finalizer until the cache shows it again (see Reconciler.prunePending). A
// scale-down or suspend uses it, so that a pod that may have lost its finalizer
// without being counted is not recorded and counted later from a stale cache. A
// failure never forgets an earlier removal that was accepted and is still expected.
func (ex *execution) removeFinalizer(pod *corev1.Pod, keepUncertain bool) (removalOutcome, error) {
	fr := ex.r.cfg.FinalizerRemovals
	// An earlier removal the API server accepted, which the cache does not show yet:
	// this one, sent from that stale cache, fails with a Conflict, which says
	// nothing against the earlier one. Its expectation stays.
	accepted := fr.Has(ex.key, pod.UID) && !ex.r.isUncertain(ex.key, pod.UID)
	if err := fr.Expect(ex.key, pod.UID); err != nil {
		ex.log.Info("Cannot track the finalizer removal", "pod", pod.Name, "err", err.Error())
	}
	version := ex.writeVersion(pod)
	if !keepUncertain && podutil.IsTerminal(pod) {
		// A pod in phase Succeeded or Failed stays so: whatever changed since the
		// cache showed it (a kubelet's last status write, a label) cannot change how
		// it is counted, so the removal needs no resourceVersion precondition, and a
		// Conflict would only delay its count by a sync and an error. The UID
		// precondition stays.
		version = ""
	}
	patch := unchangedRemovalPatch(pod, version, ex.r.cfg.Owner.Finalizer)
	_, err := ex.r.pods.PatchPod(ex.ctx, pod.Namespace, pod.Name, patch.Type, patch.Data)
	switch {
	case err == nil:
		return finalizerRemoved, nil
	case IsPodGone(err):
		return podGone, nil
	case keepUncertain && version != "" && expectations.OutcomeUnknown(err):
		ex.r.noteUncertain(ex.key, pod.UID, uncertainRemoval{version: version, cached: pod.ResourceVersion, at: ex.r.cfg.Clock.Now()})
		return removalFailed, err
	case keepUncertain && apierrors.IsConflict(err) && ex.r.isUncertain(ex.key, pod.UID):
		// Sent again from a cache that still shows the version of the uncertain
		// patch: the pod has changed since, perhaps by that patch. Still unknown.
		return podChanged, err
	case !accepted:
		fr.Observed(ex.key, pod.UID)
	}
	if version != "" && apierrors.IsConflict(err) {
		return podChanged, err
	}
	return removalFailed, err
}

// deletePods deletes the pods of the plan, removing the tracking finalizer first
// when asked, at most FinalizerRemovalParallelism at a time.
func (ex *execution) deletePods() {
	dels := ex.calls.del
	if len(dels) == 0 || ex.ctx.Err() != nil {
		return
	}
	var deleted atomic.Int32
	ex.parallel(len(dels), func(i int) {
		if ex.deletePod(dels[i]) {
			deleted.Add(1)
		}
	})
	ex.res.Deleted += int(deleted.Load())
}

// notBeingDeleted returns dels without the pods whose deletion this reconciler
// sent, accepted, and whose event the cache has not shown yet (expected by UID):
// a plan from that cache, which still shows them alive, would delete them again.
// Both Sync and SyncRoles plan through it: a group restart of several roles
// with a lagging informer deleted the pods of the failed role twice (when it
// failed, then in the restart's stop), and a failed child Job's syncs from such a
// cache deleted its running pods up to four times each (issue 37).
func (r *Reconciler) notBeingDeleted(key string, dels []plan.Deletion) []plan.Deletion {
	if len(dels) == 0 {
		return dels
	}
	if st := r.cfg.Expectations.Get(key); st.Deletions == 0 || st.Expired {
		// Past the TTL the event is taken as lost: delete again.
		return dels
	}
	pending := r.cfg.Expectations.PendingDeletionUIDs(key)
	if pending.Len() == 0 {
		return dels
	}
	out := make([]plan.Deletion, 0, len(dels))
	for _, d := range dels {
		if !pending.Has(d.Pod.UID) {
			out = append(out, d)
		}
	}
	return out
}

func (ex *execution) deletePod(d plan.Deletion) bool {
	r, pod := ex.r, d.Pod
	if d.RemoveFinalizerFirst && r.cfg.Owner.HasFinalizer(pod) {
		out, err := ex.removeFinalizer(pod, true)
		switch {
		case out == podChanged:
			// The pod changed since the cache showed it active: it may have
			// finished, and must then be counted, not stripped. Look again.
			ex.log.V(2).Info("Pod changed since the plan; not deleting it in this sync", "pod", pod.Name)
			ex.retry("a pod changed since the plan before its deletion")
			return false
		case out == removalFailed:
			ex.fail(fmt.Errorf("remove tracking finalizer of pod %s/%s before deleting it: %w", pod.Namespace, pod.Name, err))
			r.cfg.Events.Eventf(ex.owner.object, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
			return false
		case out == podGone:
			ex.log.V(2).Info("Pod already gone", "pod", pod.Name)
			return false
		}
		ex.mu.Lock()
		ex.res.FinalizersRemoved++
		ex.mu.Unlock()
	}
	exp := r.cfg.Expectations
	if err := exp.RaiseDeletions(ex.key, pod.UID); err != nil {
		ex.log.Info("Cannot track the deletion", "pod", pod.Name, "err", err.Error())
	}
	err := r.pods.DeletePod(ex.ctx, pod.Namespace, pod.Name, pod.UID)
	if err != nil {
		exp.DeletionObserved(ex.key, pod.UID)
		if isDeleteGone(err) {
			ex.log.V(2).Info("Pod already gone", "pod", pod.Name)
			return false
		}
		ex.fail(fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err))
		r.cfg.Events.Eventf(ex.owner.object, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return false
	}
	ex.log.V(2).Info("Pod deleted", "pod", pod.Name, "reason", d.Reason)
	r.cfg.Events.Eventf(ex.owner.object, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", pod.Name)
	return true
}

// parallel runs fn(0..n-1) with at most FinalizerRemovalParallelism goroutines; with
// a parallelism of 1 it runs them in order on the calling goroutine.
func (ex *execution) parallel(n int, fn func(i int)) { ex.r.parallel(n, fn) }

// parallel runs fn(0..n-1) with at most FinalizerRemovalParallelism goroutines,
// the bound of the API calls one sync runs at once; with a parallelism of 1 it runs
// them in order on the calling goroutine.
func (r *Reconciler) parallel(n int, fn func(i int)) {
	workers := min(r.cfg.FinalizerRemovalParallelism, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
