package reconcile

// The sync of a group whose roles run as child Jobs (SyncChildJobs): a
// childjobs.Plan executed through a ChildJobClient and a childjobs.StatusWriter.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// ChildJobClient makes the calls of SyncChildJobs other than the status write:
// on the group's child Jobs, its headless Service and the group itself.
// Implementations return the errors of k8s.io/apimachinery/pkg/api/errors and are
// safe for concurrent use: the calls of one kind (the deletions, the creations...)
// run at once, at most Config.FinalizerRemovalParallelism of them.
type ChildJobClient interface {
	// CreateJob creates job, which is named (child names are deterministic): a
	// Job of that name yields AlreadyExists.
	CreateJob(ctx context.Context, job *batchv1.Job) error
	// DeleteJob deletes job with propagation and the precondition that its UID
	// is job.UID: a Job of that name with another UID yields Conflict, a missing
	// one NotFound.
	DeleteJob(ctx context.Context, job *batchv1.Job, propagation metav1.DeletionPropagation) error
	// SuspendJob sets (suspend true) or clears spec.suspend of job, on the Job
	// of UID job.UID only: a merge patch that carries metadata.uid, which the API
	// server refuses as Invalid on metadata.uid when the name holds another Job.
	// A resume also writes job's pod template labels, annotations,
	// nodeSelector, tolerations and schedulingGates (childjobs.Plan.Resume's
	// merge of the role's changes made while suspended).
	SuspendJob(ctx context.Context, job *batchv1.Job, suspend bool) error
	// ScaleJob sets spec.parallelism and spec.completions of the Job of UID
	// job.UID to job's (an elastic group's Indexed child resized), with the
	// UID precondition of SuspendJob.
	ScaleJob(ctx context.Context, job *batchv1.Job) error
	// CreateService creates the group's headless Service.
	CreateService(ctx context.Context, svc *corev1.Service) error
	// CreateClaim creates one of the group's persistent volume claims
	// (spec.volumeClaimPolicies); a claim of that name yields AlreadyExists.
	CreateClaim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error
	// CreateDisruptionBudget creates the group's PodDisruptionBudget; one of
	// that name yields AlreadyExists.
	CreateDisruptionBudget(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error
	// DeleteGroup deletes the group in.Object with foreground propagation and the
	// precondition that its UID is in.UID.
	DeleteGroup(ctx context.Context, in *childjobs.Input) error
}

// SyncChildJobs syncs the group in, whose roles run as child Jobs, as read from
// the caller's cache and converted (in.Children its Jobs, in.ServiceExists its
// Service): the one door for such groups, beside SyncRoles for groups that own
// their pods. The key is Key(in.Namespace, in.Name); in.ControllerName is
// Config.Name and in.Now the Clock's (the Input is not modified: the plan reads a
// copy). Child Jobs, the Service and the group's deletion go through jobs, the
// status through status; events are recorded on in.Object. SyncChildJobs:
//
//  1. forgets the group's state when in has a new UID under a known key;
//  2. plans from the group its last status write returned when in is older than
//     it (the cache has not caught up), with in's children; or skips the sync
//     (RequeueAfter Config.StaleCacheRequeue) when that group is not known;
//  3. skips the sync while in.Children do not show the children its earlier syncs
//     created (a name not listed) or deleted (a UID listed without
//     deletionTimestamp), for at most Config.UncertainCreationTimeout after each
//     call: the Job events queue the group again, the requeue is the safety net;
//  4. computes childjobs.Compute and executes the Plan in the order documented on
//     childjobs.Plan: the group's deletion once its TTL has expired; the status
//     in one write; the deletions (NotFound, and the Conflict of the UID
//     precondition, mean done); the Service, the claims and the disruption
//     budget (AlreadyExists is done); suspend and
//     resume, then the resizes (a Job of another UID under the name means the
//     child is gone); the creations (AlreadyExists is done: an earlier sync created it); the plan's
//     events on in.Object; RequeueAfter the plan's.
//
// A conflict on the status write ends the sync with Report.Retry, RequeueAfter at
// most Config.ConflictRequeue and no error, with no other call made; any other
// failure of that write is returned, with no other call made either. A failed
// call on a child does not stop the others (a FailedDelete or FailedCreate
// Warning event each); their errors are returned together. An Input that Compute
// refuses is returned as its error. Report.Deleted and Report.Created count the
// child Jobs deleted and created; Report.Plan is nil.
func (r *Reconciler) SyncChildJobs(ctx context.Context, in *childjobs.Input, jobs ChildJobClient, status childjobs.StatusWriter) (Result, error) {
	switch {
	case in == nil:
		return Result{}, fmt.Errorf("%w: SyncChildJobs: input is nil", ErrInvalidArgument)
	case in.Object == nil:
		return Result{}, fmt.Errorf("%w: SyncChildJobs: Input.Object is nil: events are recorded on it", ErrInvalidArgument)
	case jobs == nil:
		return Result{}, fmt.Errorf("%w: SyncChildJobs: job client is nil", ErrInvalidArgument)
	case status == nil:
		return Result{}, fmt.Errorf("%w: SyncChildJobs: status writer is nil", ErrInvalidArgument)
	}
	key := Key(in.Namespace, in.Name)
	gx := &groupExecution{
		r: r, ctx: ctx, key: key, in: in, jobs: jobs, status: status, action: labelReconciling,
		log: r.cfg.Logger.WithValues(strings.ToLower(in.Owner.Kind), key),
	}
	return r.syncOwner(key, gx.log, gx)
}

// groupExecution is the state of one SyncChildJobs.
type groupExecution struct {
	r      *Reconciler
	ctx    context.Context
	key    string
	log    logr.Logger
	in     *childjobs.Input // the group as read from the cache, or as last written
	jobs   ChildJobClient
	status childjobs.StatusWriter
	action string
	// mu guards res and errs while the calls of one kind run at once.
	mu   sync.Mutex
	res  Result
	errs []error
}

func (gx *groupExecution) ownerUID() types.UID           { return gx.in.UID }
func (gx *groupExecution) ownerVersion() string          { return gx.in.ResourceVersion }
func (gx *groupExecution) labels() (mode, action string) { return labelChildJobs, gx.action }

// useWritten plans from the group as written, newer than the cached one, spec
// included; its children, and the caller's settings of the sync, are the
// cached Input's.
func (gx *groupExecution) useWritten(last written) bool {
	w := last.group
	if w == nil || w.UID != gx.in.UID {
		return false
	}
	cur := *w
	cur.Children, cur.ServiceExists, cur.ChildManagedBy = gx.in.Children, gx.in.ServiceExists, gx.in.ChildManagedBy
	gx.in = &cur
	return true
}

func (gx *groupExecution) decide(now time.Time) (Result, error) {
	r, key, in := gx.r, gx.key, gx.in
	if wait := r.childWritesPending(key, in.Children, now); wait > 0 {
		return Result{RequeueAfter: wait, Report: Report{Skipped: "waiting for the cache to show the child Jobs created or deleted"}}, nil
	}
	pin := *in
	pin.ControllerName, pin.Now = r.cfg.Name, now
	p, err := childjobs.Compute(&pin)
	if err != nil {
		return Result{}, fmt.Errorf("plan %s: %w", key, err)
	}
	for _, w := range p.Warnings {
		gx.log.Info("Ignored a child", "warning", w)
	}
	switch {
	case p.Skip != "":
		return Result{Report: Report{Skipped: p.Skip}}, nil
	case p.DeleteGroup != "":
		gx.log.Info("Deleting the group", "reason", p.DeleteGroup)
		if err := gx.jobs.DeleteGroup(gx.ctx, in); err != nil && !gone(err) {
			return Result{}, fmt.Errorf("delete %s (%s): %w", key, p.DeleteGroup, err)
		}
		return Result{}, nil
	}
	return gx.execute(in, &p, now)
}

// execute runs p after its status, in the order documented on childjobs.Plan.
func (gx *groupExecution) execute(in *childjobs.Input, p *childjobs.Plan, now time.Time) (Result, error) {
	r, ev := gx.r, gx.r.cfg.Events
	gx.res.RequeueAfter = p.RequeueAfter
	switch {
	case len(p.Create) > 0:
		gx.action = labelJobsCreated
	case len(p.Delete) > 0:
		gx.action = labelJobsDeleted
	case p.StatusChanged:
		gx.action = labelTracking
	}
	if p.StatusChanged {
		// Before any deletion: a restart is counted once across crashes.
		out, err := gx.status.WriteStatus(gx.ctx, in, p.Status)
		switch {
		case apierrors.IsConflict(err):
			gx.res.Retry = "conflict writing the status"
			gx.res.RequeueAfter = minPositive(gx.res.RequeueAfter, r.cfg.ConflictRequeue)
			return gx.res, nil
		case err != nil:
			return gx.res, fmt.Errorf("write status of %s: %w", gx.key, err)
		case out == nil:
			return gx.res, fmt.Errorf("write status of %s: the status writer returned no group", gx.key)
		}
		r.recordWrite(gx.key, in.ResourceVersion, out.ResourceVersion, written{group: out})
		gx.res.StatusWrites++
		gx.finished(in, p)
	}
	// The calls of each kind run at once (at most FinalizerRemovalParallelism),
	// the kinds in the order of childjobs.Plan: a restart of a thousand children
	// costs a round trip or two per kind, not one per child.
	r.parallel(len(p.Delete), func(i int) {
		d := p.Delete[i]
		err := gx.jobs.DeleteJob(gx.ctx, d.Job, d.Propagation)
		switch {
		case err == nil:
			r.noteChildWrite(gx.key, "", d.Job.UID, now)
			gx.count(&gx.res.Deleted)
		case !gone(err):
			gx.fail(in, ReasonFailedDelete, fmt.Errorf("delete Job %s (%s): %w", d.Job.Name, d.Reason, err))
		}
	})
	if p.Service != nil {
		if err := gx.jobs.CreateService(gx.ctx, p.Service); err != nil && !apierrors.IsAlreadyExists(err) {
			gx.note(fmt.Errorf("create Service %s (%s): %w", p.Service.Name, p.ServiceReason, err))
		}
	}
	r.parallel(len(p.Claims), func(i int) {
		c := p.Claims[i]
		if err := gx.jobs.CreateClaim(gx.ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			gx.fail(in, ReasonFailedCreate, fmt.Errorf("create PersistentVolumeClaim %s: %w", c.Name, err))
		}
	})
	if b := p.DisruptionBudget; b != nil {
		if err := gx.jobs.CreateDisruptionBudget(gx.ctx, b); err != nil && !apierrors.IsAlreadyExists(err) {
			gx.fail(in, ReasonFailedCreate, fmt.Errorf("create PodDisruptionBudget %s: %w", b.Name, err))
		}
	}
	for _, s := range [...]struct {
		list    []childjobs.JobAction
		suspend bool
	}{{p.Suspend, true}, {p.Resume, false}} {
		r.parallel(len(s.list), func(i int) {
			a := s.list[i]
			if err := gx.jobs.SuspendJob(gx.ctx, a.Job, s.suspend); err != nil && !gone(err) && !uidChanged(err) {
				gx.note(fmt.Errorf("set spec.suspend=%t on Job %s: %w", s.suspend, a.Job.Name, err))
			}
		})
	}
	r.parallel(len(p.Scale), func(i int) {
		a := p.Scale[i]
		if err := gx.jobs.ScaleJob(gx.ctx, a.Job); err != nil && !gone(err) && !uidChanged(err) {
			gx.note(fmt.Errorf("resize Job %s (%s): %w", a.Job.Name, a.Reason, err))
		}
	})
	r.parallel(len(p.Create), func(i int) {
		a := p.Create[i]
		err := gx.jobs.CreateJob(gx.ctx, a.Job)
		switch {
		case err == nil:
			r.noteChildWrite(gx.key, a.Job.Name, "", now)
			gx.count(&gx.res.Created)
		case !apierrors.IsAlreadyExists(err):
			gx.fail(in, ReasonFailedCreate, fmt.Errorf("create Job %s (%s): %w", a.Job.Name, a.Reason, err))
		}
	})
	for _, e := range p.Events {
		ev.Eventf(in.Object, e.Type, e.Reason, "%s", e.Message)
	}
	return gx.res, errors.Join(gx.errs...)
}

// fail records a failed call on a child: its error, and a Warning event.
func (gx *groupExecution) fail(in *childjobs.Input, reason string, err error) {
	gx.note(err)
	gx.r.cfg.Events.Eventf(in.Object, corev1.EventTypeWarning, reason, "Error: %v", err)
}

// note records the error of a call; safe while the calls of one kind run at once.
func (gx *groupExecution) note(err error) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	gx.errs = append(gx.errs, err)
}

// count adds one to n, a counter of gx.res; safe while the calls of one kind run
// at once.
func (gx *groupExecution) count(n *int) {
	gx.mu.Lock()
	defer gx.mu.Unlock()
	*n++
}

// finished counts the group in the metrics when the status just written finished
// it.
func (gx *groupExecution) finished(in *childjobs.Input, p *childjobs.Plan) {
	if groups.Finished(in.Status.Conditions) != nil {
		return
	}
	if c := groups.Finished(p.Status.Conditions); c != nil {
		result := labelSucceeded
		if c.Type == plaingroup.ConditionFailed {
			result = labelFailed
		}
		gx.r.cfg.Metrics.JobFinished(labelChildJobs, result, c.Reason)
		gx.log.Info("Group finished", "condition", c.Type, "reason", c.Reason)
	}
}

// gone reports whether err says the object meant is gone: NotFound, or the
// Conflict of a UID precondition.
func gone(err error) bool { return apierrors.IsNotFound(err) || apierrors.IsConflict(err) }

// uidChanged reports whether err is the API server's refusal of a write whose
// metadata.uid is not the object's (Invalid on metadata.uid).
func uidChanged(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// childWrites are the child Jobs a group's syncs created (by name) and deleted
// (by UID) that the cache has not shown yet, each with when it was sent.
type childWrites struct {
	created map[string]time.Time
	deleted map[types.UID]time.Time
}

// noteChildWrite remembers a child created (name) or deleted (uid) at now.
func (r *Reconciler) noteChildWrite(key, name string, uid types.UID, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	if s.children == nil {
		s.children = &childWrites{}
	}
	c := s.children
	if name != "" {
		if c.created == nil {
			c.created = map[string]time.Time{}
		}
		c.created[name] = now
	}
	if uid != "" {
		if c.deleted == nil {
			c.deleted = map[types.UID]time.Time{}
		}
		c.deleted[uid] = now
	}
}

// childWritesPending drops the child writes of key that children show, and those
// older than Config.UncertainCreationTimeout (a lost event must not hold the group),
// and returns how long until the oldest left expires, or 0 when none is left.
func (r *Reconciler) childWritesPending(key string, children []*batchv1.Job, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	if s == nil || s.children == nil {
		return 0
	}
	c := s.children
	names := make(map[string]bool, len(children))
	deleting := make(map[types.UID]bool, len(children))
	for _, j := range children {
		if j != nil {
			names[j.Name] = true
			deleting[j.UID] = j.DeletionTimestamp != nil
		}
	}
	timeout := r.cfg.UncertainCreationTimeout
	var wait time.Duration
	keep := func(shown bool, at time.Time) bool {
		left := at.Add(timeout).Sub(now)
		if shown || left <= 0 {
			return false
		}
		wait = minPositive(wait, left)
		return true
	}
	for name, at := range c.created {
		if !keep(names[name], at) {
			delete(c.created, name)
		}
	}
	for uid, at := range c.deleted {
		d, listed := deleting[uid]
		if !keep(!listed || d, at) {
			delete(c.deleted, uid)
		}
	}
	if len(c.created) == 0 && len(c.deleted) == 0 {
		s.children = nil
	}
	return wait
}
