package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/plan"
)

// execution is the state of one sync.
type execution struct {
	r      *Reconciler
	ctx    context.Context
	key    string
	orig   *plan.Workload // the owner as read from the cache
	cur    *plan.Workload // the latest version known: orig, then what status writes return
	plan   *plan.Plan
	log    logr.Logger
	mode   string
	action string
	res    Result

	// adopted maps the UID of each pod adopted in this sync, when the adoption was
	// the only change since the cache showed it, to the resourceVersion the adoption
	// returned (see writeVersion). Written by claim, read-only afterwards.
	adopted map[types.UID]string

	mu        sync.Mutex
	errs      []error
	persisted bool
}

func (ex *execution) fail(err error) {
	ex.mu.Lock()
	ex.errs = append(ex.errs, err)
	ex.mu.Unlock()
}

func (ex *execution) result() (Result, error) {
	if len(ex.errs) == 0 {
		return ex.res, nil
	}
	return ex.res, fmt.Errorf("sync job %s: %w", ex.key, errors.Join(ex.errs...))
}

// execute runs the plan in the crash-safe order documented on plan.Plan.
func (ex *execution) execute() (Result, error) {
	p := ex.plan
	ex.res.RequeueAfter = p.RequeueAfter
	switch {
	case len(p.Create) > 0:
		ex.action = labelPodsCreated
	case len(p.Delete) > 0:
		ex.action = labelPodsDeleted
	case p.RecordStatus != nil || len(p.RemoveFinalizers) > 0 || p.StatusChanged:
		ex.action = labelTracking
	}

	// 1. Adopt and release (a release takes the tracking finalizer too). The plan
	// counts these pods as the Job's (or not); if one of them could not be changed,
	// the plan is wrong, so stop before anything else.
	if stop, err := ex.claim(); stop || err != nil {
		if err != nil {
			ex.fail(err)
		}
		return ex.result()
	}

	// 2. Persist the newly finished pods before any finalizer goes.
	if p.RecordStatus != nil {
		if ok, err := ex.writeStatus(*p.RecordStatus, "record finished pods"); !ok {
			if err != nil {
				ex.fail(err)
			}
			return ex.result()
		}
	}

	// 3. Remove finalizers.
	removed := ex.removeFinalizers()

	// 4. Count what lost its finalizer; finish the Job when everything is counted.
	settled := p.Settle(removed)
	if settled.Changed {
		if ok, err := ex.writeStatus(settled.Status, "settle"); !ok {
			if err != nil {
				ex.fail(err)
			}
			return ex.result()
		}
	}
	ex.persist()
	ex.afterStatus(settled)

	// 5. Delete, then create.
	ex.deletePods()
	ex.createPods()
	return ex.result()
}

// retry stops nothing by itself: it records why the sync asks to be synced again
// soon (Report.Retry; the first reason is kept) and lowers RequeueAfter to at most
// Config.ConflictRequeue. It takes ex.mu.
func (ex *execution) retry(why string) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.res.Retry == "" {
		ex.res.Retry = why
	}
	ex.res.RequeueAfter = minPositive(ex.res.RequeueAfter, ex.r.cfg.ConflictRequeue)
}

// writeStatus writes st as the Job's status. It returns ok false when the write
// failed: with a nil error and a retry noted on a conflict, with the error
// otherwise.
func (ex *execution) writeStatus(st batchv1.JobStatus, what string) (ok bool, err error) {
	out, err := ex.r.status.WriteStatus(ex.ctx, ex.cur, st)
	if err != nil {
		if apierrors.IsConflict(err) {
			ex.log.V(2).Info("Conflict writing the owner's status; requeueing", "step", what)
			ex.retry("conflict writing the status (" + what + ")")
			return false, nil
		}
		return false, fmt.Errorf("write status (%s): %w", what, err)
	}
	if out == nil || out.Object == nil {
		return false, fmt.Errorf("write status (%s): the status writer returned no owner object", what)
	}
	ex.r.recordWrite(ex.key, ex.cur.ResourceVersion, out)
	ex.cur = out
	ex.res.StatusWrites++
	ex.persist()
	return true, nil
}

// persist runs once the newly finished pods are in the API (the first status write
// succeeded, or none was needed): the backoff record moves on, and the failure policy
// metrics count them. Doing it earlier would count the same pods again after a failed
// write.
func (ex *execution) persist() {
	if ex.persisted {
		return
	}
	ex.persisted = true
	ex.r.cfg.BackoffStore.Set(ex.key, ex.plan.Backoff)
	for action, n := range ex.plan.FailurePolicyActions {
		ex.r.cfg.Metrics.PodFailuresHandledByPolicy(string(action), n)
	}
}

// afterStatus records the events and metrics of the statuses written.
func (ex *execution) afterStatus(settled plan.Settled) {
	r := ex.r
	for _, e := range ex.plan.Events {
		r.cfg.Events.Eventf(ex.orig.Object, e.Type, e.Reason, "%s", e.Message)
	}
	for _, e := range settled.Events {
		r.cfg.Events.Eventf(ex.orig.Object, e.Type, e.Reason, "%s", e.Message)
	}
	before, after := &ex.orig.Status, &ex.cur.Status
	if d := after.Succeeded - before.Succeeded; d > 0 {
		r.cfg.Metrics.PodsFinished(ex.mode, labelSucceeded, int(d))
	}
	if d := after.Failed - before.Failed; d > 0 {
		r.cfg.Metrics.PodsFinished(ex.mode, labelFailed, int(d))
	}
	if f := settled.Finished; f != nil && ex.res.StatusWrites > 0 {
		result := labelSucceeded
		if f.Type == batchv1.JobFailed {
			result = labelFailed
		}
		r.cfg.Metrics.JobFinished(ex.mode, result, f.Reason)
		r.cfg.BackoffStore.Delete(ex.key)
		ex.log.Info("Owner finished", "condition", f.Type, "reason", f.Reason)
	}
}

// removeFinalizers sends the removal patches of the plan, at most
// FinalizerRemovalParallelism at a time, and returns the UIDs whose removal the API
// server accepted (or whose pod is gone).
func (ex *execution) removeFinalizers() sets.Set[types.UID] {
	actions := ex.plan.RemoveFinalizers
	removed := sets.New[types.UID]()
	var mu sync.Mutex
	ex.parallel(len(actions), func(i int) {
		pod := actions[i].Pod
		out, err := ex.removeFinalizer(pod, false)
		if err != nil {
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
		return removalFailed, err
	case accepted:
		return removalFailed, err
	default:
		fr.Observed(ex.key, pod.UID)
		return removalFailed, err
	}
}

// deletePods deletes the pods of the plan, removing the tracking finalizer first
// when asked, at most FinalizerRemovalParallelism at a time.
func (ex *execution) deletePods() {
	dels := ex.plan.Delete
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

func (ex *execution) deletePod(d plan.Deletion) bool {
	r, pod := ex.r, d.Pod
	if d.RemoveFinalizerFirst && r.cfg.Owner.HasFinalizer(pod) {
		out, err := ex.removeFinalizer(pod, true)
		switch {
		case out == removalFailed && apierrors.IsConflict(err) && ex.writeVersion(pod) != "":
			// The pod changed since the cache showed it active: it may have
			// finished, and must then be counted, not stripped. Look again.
			ex.log.V(2).Info("Pod changed since the plan; not deleting it in this sync", "pod", pod.Name)
			ex.retry("a pod changed since the plan before its deletion")
			return false
		case out == removalFailed:
			ex.fail(fmt.Errorf("remove tracking finalizer of pod %s/%s before deleting it: %w", pod.Namespace, pod.Name, err))
			r.cfg.Events.Eventf(ex.orig.Object, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
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
	if err := exp.RaiseDeletionsOf(ex.key, pod.UID); err != nil {
		ex.log.Info("Cannot track the deletion", "pod", pod.Name, "err", err.Error())
	}
	err := r.pods.DeletePod(ex.ctx, pod.Namespace, pod.Name, pod.UID)
	if err != nil {
		exp.DeletionObservedUID(ex.key, pod.UID)
		if isDeleteGone(err) {
			ex.log.V(2).Info("Pod already gone", "pod", pod.Name)
			return false
		}
		ex.fail(fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err))
		r.cfg.Events.Eventf(ex.orig.Object, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting: %v", err)
		return false
	}
	ex.log.V(2).Info("Pod deleted", "pod", pod.Name, "reason", d.Reason)
	r.cfg.Events.Eventf(ex.orig.Object, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted pod: %v", pod.Name)
	return true
}

// parallel runs fn(0..n-1) with at most FinalizerRemovalParallelism goroutines; with
// a parallelism of 1 it runs them in order on the calling goroutine.
func (ex *execution) parallel(n int, fn func(i int)) {
	workers := min(ex.r.cfg.FinalizerRemovalParallelism, n)
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
