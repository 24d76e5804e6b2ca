package reconcile

// The sync of an owner of several roles (SyncRoles): the same stores, the same
// pod calls as Sync, one status write.

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/ownedpods"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// computeRoles decides a sync of an owner of several roles: ownedpods.Compute, which
// the tests replace with hand-built plans.
var computeRoles = ownedpods.Compute

// SyncRoles syncs w, an owner of several roles as read from the caller's cache and
// converted, whose pods it owns directly (no child Jobs): the one door for such
// owners, on the same Reconciler as Sync (the owner kind is Config.Owner, the key
// Key(w.Namespace, w.Name), the stores those of Config). It lists the pods of
// every role and attempt with list after checking the expectations, decides with
// ownedpods.Compute, records events on w.Object and writes the status through status.
// SyncRoles:
//
//  1. forgets the owner's state when w has a new UID under a known key;
//  2. syncs from the owner its last status write returned when w is older than it
//     (the cache has not caught up), or skips the sync (RequeueAfter
//     StaleCacheRequeue) when that owner is not known;
//  3. checks the expectations, lists the pods and computes the ownedpods.Plan;
//  4. executes it in the order documented on ownedpods.Plan: the status in one write
//     when it changed, then the finalizer removals, then deletions and creations,
//     each call made as Sync makes it (expectations raised before the call,
//     removals recorded as pending, slow-start batches, named pods read back).
//
// Report.StatusWrites is never more than 1, and Report.Plan is nil. A conflict on
// the status write ends the sync with Report.Retry, RequeueAfter at most
// Config.ConflictRequeue and no error, with no pod call made; any other failure of
// that write is returned, with no pod call made either. Failed pod calls do not stop
// the others; their errors are returned together. An owner ownedpods.Compute refuses
// (plan.ErrInvalidJob) gets a Warning event InvalidJob and Report.Skipped, without
// error.
func (r *Reconciler) SyncRoles(ctx context.Context, w *ownedpods.Workload, list func(*ownedpods.Workload) ([]*corev1.Pod, error), status ownedpods.StatusWriter) (Result, error) {
	switch {
	case w == nil:
		return Result{}, fmt.Errorf("%w: SyncRoles: workload is nil", ErrInvalidArgument)
	case w.Object == nil:
		return Result{}, fmt.Errorf("%w: SyncRoles: Workload.Object is nil: events are recorded on it", ErrInvalidArgument)
	case list == nil:
		return Result{}, fmt.Errorf("%w: SyncRoles: list is nil", ErrInvalidArgument)
	case status == nil:
		return Result{}, fmt.Errorf("%w: SyncRoles: status writer is nil", ErrInvalidArgument)
	case r.pods == nil:
		return Result{}, fmt.Errorf("%w: SyncRoles: the Reconciler has no pod client (New was given nil)", ErrInvalidArgument)
	}
	key := Key(w.Namespace, w.Name)
	rx := &rolesExecution{
		execution: &execution{
			r:      r,
			ctx:    ctx,
			key:    key,
			log:    r.cfg.Logger.WithValues(r.logKey, key),
			mode:   labelRoles,
			action: labelReconciling,
		},
		orig:   w,
		cur:    w,
		list:   list,
		status: status,
	}
	return r.syncOwner(key, rx.log, rx)
}

// rolesExecution is the state of one SyncRoles: the execution its pod calls share
// with Sync, and the owner and plan of several roles.
type rolesExecution struct {
	*execution
	orig   *ownedpods.Workload // the owner as read from the cache
	cur    *ownedpods.Workload // orig, then what the status write returned
	list   func(*ownedpods.Workload) ([]*corev1.Pod, error)
	plan   *ownedpods.Plan
	status ownedpods.StatusWriter
}

func (rx *rolesExecution) ownerUID() types.UID  { return rx.orig.UID }
func (rx *rolesExecution) ownerVersion() string { return rx.orig.ResourceVersion }

func (rx *rolesExecution) useWritten(last written) bool {
	if last.roles == nil || last.roles.UID != rx.orig.UID {
		return false
	}
	rx.orig, rx.cur = last.roles, last.roles
	return true
}

func (rx *rolesExecution) decide(now time.Time) (res Result, err error) {
	r, key, w, list := rx.r, rx.key, rx.orig, rx.list
	if wait := r.expireUncertainCreates(key, now); wait > 0 {
		defer func() { res.RequeueAfter = minPositive(res.RequeueAfter, wait) }()
	}
	in, err := r.readInputs(key, func() ([]*corev1.Pod, error) { return list(w) }, now)
	if err != nil {
		return Result{}, fmt.Errorf("list pods of %s %s: %w", r.logKey, key, err)
	}
	p, err := computeRoles(ownedpods.Input{
		Workload:                 w,
		Pods:                     in.pods,
		ControllerName:           r.cfg.Name,
		ExpectationsSatisfied:    in.satisfied,
		PendingFinalizerRemovals: in.pending,
		TakenPodNames:            in.taken,
		Now:                      now,
		Options:                  r.cfg.planOptions(plainbackoff.Policy{}),
		Owner:                    r.cfg.Owner,
	})
	if err != nil {
		if errors.Is(err, plan.ErrInvalidJob) {
			r.cfg.Events.Eventf(w.Object, corev1.EventTypeWarning, ReasonInvalidJob, "%v", err)
			rx.log.Info("Owner cannot be synced", "err", err.Error())
			return Result{Report: Report{Skipped: err.Error()}}, nil
		}
		return Result{}, fmt.Errorf("plan %s %s: %w", r.logKey, key, err)
	}
	if p == nil {
		return Result{}, fmt.Errorf("plan %s %s: ownedpods.Compute returned no plan", r.logKey, key)
	}
	for _, warning := range p.Warnings {
		rx.log.Info("Bad input worked around", "warning", warning)
	}
	if p.Skip != "" {
		rx.log.V(4).Info("Skipping the owner", "reason", p.Skip)
		return Result{Report: Report{Skipped: p.Skip}}, nil
	}
	rx.plan = p
	rx.owner = podOwner{
		uid:    w.UID,
		object: w.Object,
		base:   func(c plan.Creation) string { return roleBase(w, c) },
		reason: func(c plan.Creation) string { return roleCreationReason(w, c) },
	}
	rx.calls = podCalls{remove: p.RemoveFinalizers, del: r.notBeingDeleted(key, p.Delete), create: p.Create}
	rx.log.V(4).Info("Plan", "satisfied", in.satisfied, "statusChanged", p.StatusChanged,
		"removeFinalizers", len(p.RemoveFinalizers), "delete", len(p.Delete), "create", len(p.Create))
	return rx.execute()
}

// execute runs the plan in the order documented on ownedpods.Plan: the status in one
// write, then the pod calls Sync makes.
func (rx *rolesExecution) execute() (Result, error) {
	p := rx.plan
	rx.res.RequeueAfter = p.RequeueAfter
	switch {
	case len(p.Create) > 0:
		rx.action = labelPodsCreated
	case len(p.Delete) > 0:
		rx.action = labelPodsDeleted
	case len(p.RemoveFinalizers) > 0 || p.StatusChanged:
		rx.action = labelTracking
	}
	// 1. The status: it records the newly finished pods and counts only those
	// without the finalizer, so it goes before any removal, and nothing goes when
	// it failed.
	if p.StatusChanged {
		if ok, err := rx.writeStatus(p.Status); !ok {
			if err != nil {
				rx.fail(err)
			}
			return rx.result()
		}
	}
	rx.afterStatus()
	// 2. Remove finalizers; the next sync's write counts their pods.
	rx.removeFinalizers()
	// 3. Delete, then create.
	rx.deletePods()
	rx.createPods()
	return rx.result()
}

// writeStatus writes st as the owner's status. It returns ok false when the write
// failed: with a nil error and a retry noted on a conflict, with the error
// otherwise.
func (rx *rolesExecution) writeStatus(st ownedpods.Status) (ok bool, err error) {
	out, err := rx.status.WriteStatus(rx.ctx, rx.cur, st)
	if err != nil {
		if apierrors.IsConflict(err) {
			rx.log.V(2).Info("Conflict writing the owner's status; requeueing")
			rx.retry("conflict writing the status")
			return false, nil
		}
		return false, fmt.Errorf("write status: %w", err)
	}
	if out == nil || out.Object == nil {
		return false, errors.New("write status: the status writer returned no owner object")
	}
	rx.r.recordWrite(rx.key, rx.cur.ResourceVersion, out.ResourceVersion, written{roles: out})
	rx.cur = out
	rx.res.StatusWrites++
	return true, nil
}

// afterStatus records the events and metrics of the plan once its status is in
// the API (written, or unchanged): earlier, a failed write would have them
// recorded again by the next sync.
func (rx *rolesExecution) afterStatus() {
	r, p := rx.r, rx.plan
	for _, e := range p.Events {
		r.cfg.Events.Eventf(rx.orig.Object, e.Type, e.Reason, "%s", e.Message)
	}
	for _, rp := range p.Roles {
		if rp == nil {
			continue
		}
		for action, n := range rp.FailurePolicyActions {
			r.cfg.Metrics.PodFailuresHandledByPolicy(string(action), n)
		}
	}
	var succeeded, failed int32
	for _, s := range rx.cur.Status.Roles {
		succeeded, failed = succeeded+s.Succeeded, failed+s.Failed
	}
	for _, s := range rx.orig.Status.Roles {
		succeeded, failed = succeeded-s.Succeeded, failed-s.Failed
	}
	if succeeded > 0 {
		r.cfg.Metrics.PodsFinished(labelRoles, labelSucceeded, int(succeeded))
	}
	if failed > 0 {
		r.cfg.Metrics.PodsFinished(labelRoles, labelFailed, int(failed))
	}
	if rx.res.StatusWrites == 0 || groups.Finished(rx.orig.Status.Conditions) != nil {
		return
	}
	if c := groups.Finished(rx.cur.Status.Conditions); c != nil {
		result := labelSucceeded
		if c.Type == plaingroup.ConditionFailed {
			result = labelFailed
		}
		r.cfg.Metrics.JobFinished(labelRoles, result, c.Reason)
		rx.log.Info("Owner finished", "condition", c.Type, "reason", c.Reason)
	}
}

// roleOf returns the role of w that the pod of c belongs to (its role label), and
// its status, or nil.
func roleOf(w *ownedpods.Workload, c plan.Creation) (*ownedpods.Role, *ownedpods.RoleStatus) {
	name := c.Pod.Labels[plaingroup.LabelRoleName]
	var role *ownedpods.Role
	for i := range w.Roles {
		if w.Roles[i].Name == name {
			role = &w.Roles[i]
		}
	}
	for i := range w.Status.Roles {
		if w.Status.Roles[i].Name == name {
			return role, &w.Status.Roles[i]
		}
	}
	return role, nil
}

// roleBase is the name that the pod names of a role's indexes derive from:
// "<owner>-<role>", the name of the role's virtual Job in ownedpods.Compute.
func roleBase(w *ownedpods.Workload, c plan.Creation) string {
	if role, _ := roleOf(w, c); role != nil {
		return w.Name + "-" + role.Name
	}
	return w.Name
}

// roleCreationReason is the reason label in job_pods_creation_total of a creation
// for a role: new pods, or replacements by the role's pod replacement policy.
func roleCreationReason(w *ownedpods.Workload, c plan.Creation) string {
	role, st := roleOf(w, c)
	if role == nil || st == nil {
		return labelCreationNew
	}
	return jobCreationReason(&plan.Workload{Spec: role.Spec, Status: st.Job})
}
