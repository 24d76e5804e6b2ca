package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/plan"
)

// execution is the state of one sync (syncOwner runs it): of a Job's plan (Sync) or of a ownedpods.Plan
// (SyncRoles, through rolesExecution). The pod calls read only owner and calls,
// which both fill in; orig, cur, plan and adopted are Sync's.
type execution struct {
	r      *Reconciler
	ctx    context.Context
	key    string
	log    logr.Logger
	mode   string
	action string
	res    Result

	owner podOwner
	calls podCalls

	list PodLister      // Sync's lister of the owner's pods
	orig *plan.Workload // the owner as read from the cache
	cur  *plan.Workload // the latest version known: orig, then what status writes return
	plan *plan.Plan

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
	return ex.res, fmt.Errorf("sync %s %s: %w", ex.r.logKey, ex.key, errors.Join(ex.errs...))
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

	// 5 (early). Creations that need nothing before them go out beside steps 2
	// to 4 (see createsBeside): the sync then takes the longer of the two, and
	// the events of the new pods, which the next batch waits for, come that much
	// sooner.
	if ex.createsBeside() {
		var creating sync.WaitGroup
		creating.Go(ex.createPods)
		ex.track()
		creating.Wait()
		return ex.result()
	}
	if !ex.track() {
		return ex.result()
	}

	// 5. Delete, then create.
	ex.deletePods()
	ex.createPods()
	return ex.result()
}

// track runs steps 2 to 4 of the plan: the record of the newly finished pods, the
// finalizer removals and the status that counts them. It reports false when a
// status write failed (the failure or retry noted): the sync goes no further.
func (ex *execution) track() bool {
	p := ex.plan
	// 2. Persist the newly finished pods before any finalizer goes.
	if p.RecordStatus != nil {
		if ok, err := ex.writeStatus(*p.RecordStatus, "record finished pods"); !ok {
			if err != nil {
				ex.fail(err)
			}
			return false
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
			return false
		}
	}
	ex.persist()
	ex.afterStatus(settled)
	return true
}

// createsBeside reports whether the plan's creations may run beside the tracking
// of finished pods (the record, the finalizer removals, the count) instead of
// after it, as the Job controller upstream creates before it tracks. Creating a
// pod counts nothing and uncounts nothing: the plan decided the creations from a
// cache that accounts for every pod in flight, whatever the status writes say. So
// they wait only when something must come first: deletions (a Job never runs more
// pods than it wants), a condition the plan changes (a Job suspended, resumed or
// finishing is settled first), a status that starts the Job (its startTime is
// stored before its first pod runs: activeDeadlineSeconds counts from it), or
// calls made one at a time in plan order (FinalizerRemovalParallelism 1, the
// reproducible runs).
//
// A status write that fails leaves the creations made: the next sync sees their
// pods (they are expected) and plans from there, as after any sync. With a
// lagging informer this is what sets the pace of a large Job: each batch of
// creations waits for the events of the last one, so the sooner they go out, the
// sooner the next batch may.
func (ex *execution) createsBeside() bool {
	p := ex.plan
	return len(ex.calls.create) > 0 && len(ex.calls.del) == 0 && len(p.Conditions) == 0 &&
		ex.r.cfg.FinalizerRemovalParallelism > 1 && ex.orig.Status.StartTime != nil &&
		(p.RecordStatus != nil || len(ex.calls.remove) > 0)
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
	ex.r.recordWrite(ex.key, ex.cur.ResourceVersion, out.ResourceVersion, written{job: out})
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
