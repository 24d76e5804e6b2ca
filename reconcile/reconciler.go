package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plan"
)

// Reconciler runs the sync of one owner (a Job, or any Workload) at a time against a
// pod client and a status writer: it checks the expectations, computes a plan.Plan
// and executes it in the crash-safe order. SyncRoles does the same for an owner of
// several roles (a ownedpods.Plan, its status through a ownedpods.StatusWriter). It keeps per-owner state keyed by
// "namespace/name": the stores of Config (expectations, finalizer removals in
// flight, backoff records) and one record of its own per key (the UID, the last
// status version it wrote, writes of unknown outcome, the slow-start batch size).
//
// A Reconciler is safe for concurrent use by several workers as long as one key is
// synced by one worker at a time (a workqueue guarantees that). One Reconciler
// serves one owner kind (Config.Owner).
type Reconciler struct {
	cfg    Config
	pods   PodClient
	status StatusWriter
	// logKey names the owner in every log line of a sync: its kind in lower case
	// ("job" for a batch/v1 Job, as the Job controller's logs do).
	logKey string

	mu sync.Mutex
	// keys holds the Reconciler's own record of each owner key (see keyState).
	keys map[string]*keyState
}

// Result is the outcome of a sync: the control a caller acts on (RequeueAfter)
// apart from the Report of what the sync did. A caller requeues the owner's key
// after RequeueAfter when it is positive, and with rate limiting when Sync returns
// an error; it reads nothing else for control.
type Result struct {
	// RequeueAfter, when positive, asks for another sync after that delay: a
	// pod-failure backoff, the active deadline, a cache that has not caught up
	// (Config.StaleCacheRequeue), a creation of unknown outcome, or a sync that
	// stopped early to look again (Config.ConflictRequeue; Report.Retry says why).
	RequeueAfter time.Duration
	// Report is what the sync did; its fields are promoted (res.Plan, res.Created).
	Report
}

// Report is what a sync did, for logs, metrics and tests. It carries no control:
// Result.RequeueAfter does.
type Report struct {
	// Skipped says why the owner was not acted on, or is empty: another controller
	// manages it, it has finished, the cache is stale, or its spec is invalid.
	Skipped string
	// Retry says why the sync stopped early and asked to be synced again soon
	// (Result.RequeueAfter at most Config.ConflictRequeue), or is empty: a status
	// write met a conflict, a pod vanished while being adopted or released, or
	// changed since the plan before its release or its finalizer removal, or a
	// creation met a pod stored by an earlier request.
	Retry string
	// Plan is the plan the sync executed (nil when none was computed).
	Plan *plan.Plan
	// StatusWrites, FinalizersRemoved, Deleted and Created count the API calls
	// that succeeded.
	StatusWrites, FinalizersRemoved, Deleted, Created int
	// Adopted and Released count the adoption and release patches that succeeded.
	// A release removes the tracking finalizer in the same patch; FinalizersRemoved
	// does not count it.
	Adopted, Released int
}

// PodLister lists the pods of an owner from the caller's cache: the pods whose
// controller reference has the owner's UID and, when its spec has a selector, the
// orphans in its namespace matching it. Sync calls it after checking the
// expectations.
type PodLister func(w *plan.Workload) ([]*corev1.Pod, error)

// ErrInvalidArgument is wrapped by the errors of calls given a nil Job or client.
var ErrInvalidArgument = errors.New("invalid argument")

// New returns a Reconciler for owners of kind cfg.Owner: pods go through pods, the
// owner's status through status. A controller of batch/v1 Jobs writes
//
//	reconcile.New(cfg, client, reconcile.JobStatusWriter(client))
//
// The defaults are filled in by Config.WithDefaults; a caller that reads a value in
// use (the Clock, the stores) calls it first and passes its result. New fails, with
// an error wrapping ErrInvalidConfig that names every bad field, when cfg.Name is
// empty or a value is out of range.
//
// pods and status may be nil for a Reconciler that serves only SyncChildJobs,
// whose calls go through the clients it is given: Sync then fails with
// ErrInvalidArgument without either, and SyncRoles without pods.
func New(cfg Config, pods PodClient, status StatusWriter) (*Reconciler, error) {
	c, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	return &Reconciler{cfg: c, pods: pods, status: status, logKey: strings.ToLower(c.Owner.Kind), keys: map[string]*keyState{}}, nil
}

// Key returns the key of the owner namespace/name in the Reconciler's stores and
// work queues: "namespace/name".
func Key(namespace, name string) string { return namespace + "/" + name }

// Sync syncs the owner w, as read from the caller's cache and converted
// (plan.JobWorkload for a batch/v1 Job), listing its pods with list after checking
// the expectations: a pod created by the previous sync can reach the cache between
// an earlier list and that check, and the owner would then look one pod short.
// Events are recorded on w.Object, the status is written through the Reconciler's
// StatusWriter, and the owner's key is Key(w.Namespace, w.Name). Sync:
//
//  1. forgets the owner's state when w has a new UID under a known key;
//  2. syncs from the owner its last status write returned when w is older than it
//     (the cache has not caught up), or skips the sync (RequeueAfter
//     StaleCacheRequeue) when that owner is not known;
//  3. checks the expectations, lists the pods and computes the plan;
//  4. executes the plan in the order documented on plan.Plan.
//
// A conflict on a status write ends the sync with Report.Retry, RequeueAfter at
// most Config.ConflictRequeue and no error. A failed pod creation, deletion or
// finalizer removal does not stop the other calls; the errors are returned together
// after the sync, so the caller requeues with rate limiting. An owner the plan
// cannot handle (an unknown completion mode...) gets a Warning event and
// Report.Skipped, without error: retrying would not help.
func (r *Reconciler) Sync(ctx context.Context, w *plan.Workload, list PodLister) (Result, error) {
	if w == nil {
		return Result{}, fmt.Errorf("%w: Sync: workload is nil", ErrInvalidArgument)
	}
	if w.Object == nil {
		return Result{}, fmt.Errorf("%w: Sync: Workload.Object is nil: events are recorded on it", ErrInvalidArgument)
	}
	if list == nil {
		return Result{}, fmt.Errorf("%w: Sync: list is nil", ErrInvalidArgument)
	}
	if r.pods == nil || r.status == nil {
		return Result{}, fmt.Errorf("%w: Sync: the Reconciler has no pod client or status writer (New was given nil)", ErrInvalidArgument)
	}
	if w.Backoff.Base < 0 || w.Backoff.Max < 0 {
		return Result{}, fmt.Errorf("%w: Sync: Workload.Backoff: %+v: durations must not be negative (zero means the default)", ErrInvalidArgument, w.Backoff)
	}
	key := workloadKey(w)
	ex := &execution{
		r:      r,
		ctx:    ctx,
		key:    key,
		orig:   w,
		cur:    w,
		list:   list,
		log:    r.cfg.Logger.WithValues(r.logKey, key),
		mode:   completionMode(&w.Spec),
		action: labelReconciling,
	}
	return r.syncOwner(key, ex.log, ex)
}

func (ex *execution) ownerUID() types.UID           { return ex.orig.UID }
func (ex *execution) ownerVersion() string          { return ex.orig.ResourceVersion }
func (ex *execution) labels() (mode, action string) { return ex.mode, ex.action }

func (ex *execution) useWritten(last written) bool {
	if last.job == nil || last.job.UID != ex.orig.UID {
		return false
	}
	ex.orig, ex.cur = last.job, last.job
	return true
}

func (ex *execution) decide(now time.Time) (res Result, err error) {
	r, key, job, list := ex.r, ex.key, ex.orig, ex.list
	if wait := r.expireUncertainCreates(key, now); wait > 0 {
		defer func() { res.RequeueAfter = minPositive(res.RequeueAfter, wait) }()
	}
	in, err := r.readInputs(key, func() ([]*corev1.Pod, error) { return list(job) }, now)
	if err != nil {
		return Result{}, fmt.Errorf("list pods of job %s: %w", key, err)
	}
	rec, _ := r.cfg.BackoffStore.Get(key)
	p, err := plan.Compute(plan.Input{
		Workload:                 job,
		Pods:                     in.pods,
		ControllerName:           r.cfg.Name,
		ExpectationsSatisfied:    in.satisfied,
		PendingFinalizerRemovals: in.pending,
		TakenPodNames:            in.taken,
		Backoff:                  rec,
		Now:                      now,
		Options:                  r.cfg.planOptions(job.Backoff),
		Owner:                    r.cfg.Owner,
		Facts:                    r.factsOf(key),
	})
	if err != nil {
		if errors.Is(err, plan.ErrInvalidJob) {
			r.cfg.Events.Eventf(job.Object, corev1.EventTypeWarning, ReasonInvalidJob, "%v", err)
			ex.log.Info("Owner cannot be synced", "err", err.Error())
			return Result{Report: Report{Skipped: err.Error()}}, nil
		}
		return Result{}, fmt.Errorf("plan job %s: %w", key, err)
	}
	for _, w := range p.Warnings {
		ex.log.Info("Bad input worked around", "warning", w)
	}
	if p.Skip != "" {
		if _, done := jobstatus.Finished(&job.Status); done {
			r.cfg.BackoffStore.Delete(key)
		}
		ex.log.V(4).Info("Skipping the owner", "reason", p.Skip)
		return Result{Report: Report{Skipped: p.Skip, Plan: p}}, nil
	}
	ex.plan = p
	ex.res.Plan = p
	ex.owner = podOwner{
		uid:    job.UID,
		object: job.Object,
		base:   func(plan.Creation) string { return job.Name },
		reason: func(plan.Creation) string { return jobCreationReason(job) },
	}
	ex.calls = podCalls{remove: p.RemoveFinalizers, del: r.notBeingDeleted(key, p.Delete), create: p.Create}
	ex.log.V(4).Info("Plan", "satisfied", in.satisfied, "plan", p.String())
	return ex.execute()
}

// syncInputs is what a sync reads before its plan, besides the owner.
type syncInputs struct {
	pods []*corev1.Pod
	// satisfied says whether the expectations were satisfied before the list.
	satisfied bool
	// pending are the finalizer removals in flight, taken the pod names found
	// held by pods that are not the owner's.
	pending sets.Set[types.UID]
	taken   sets.Set[string]
}

// readInputs checks the expectations and the pending finalizer removals of key,
// then lists its pods with list (a pod created by the previous sync can reach the
// cache between an earlier list and that check, and the owner would then look one
// pod short; a removal observed during the list may not show in it), and prunes
// the records the list shows settled. The error is list's.
func (r *Reconciler) readInputs(key string, list func() ([]*corev1.Pod, error), now time.Time) (syncInputs, error) {
	exp := r.cfg.Expectations.Get(key)
	satisfied := exp.Satisfied
	// Read before the list, like the expectations: a removal observed while the
	// list is read may not be in it (see prunePending).
	pending := r.cfg.FinalizerRemovals.Pending(key)
	pods, err := list()
	if err != nil {
		return syncInputs{}, err
	}
	r.notePods(key, len(pods))
	if exp.Deletions > 0 && r.pruneDeletions(key, pods) && !satisfied {
		// Nothing else was outstanding when the expectations were checked, before
		// the list: every pod created earlier is in it.
		satisfied = exp.Creations == 0
	}
	return syncInputs{
		pods:      pods,
		satisfied: satisfied,
		pending:   r.prunePending(key, pods, pending, now),
		taken:     r.takenNames(key, pods, now),
	}, nil
}

func completionMode(s *plan.Spec) string {
	if ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
		return labelIndexed
	}
	return labelNonIndexed
}

// CleanOrphan removes the tracking finalizer of pod when the rules of
// finalizers.DecideOrphan (with Config.Owner and Config.Name) allow it, and returns
// the decision. own is what the caller's cache shows of the object named by the
// pod's controller reference (finalizers.JobOwner of a batch/v1 Job), nil when the
// cache has none.
//
// Pods and owners come from separate watches, so a pod can reach a cache before its
// owner, or before the owner recreated under the name. When the decision frees the
// pod because own is nil or has another UID than the reference, and Config.ReadOwner
// is set, CleanOrphan first reads the owner from the API server and decides again
// on what it read: a live owner keeps its pod. When the read fails, nothing is
// removed and the error is returned (with the zero decision) for the caller to
// retry. A caller that knows the owner is gone (it saw its deletion:
// OwnerEventResult.Gone) passes &finalizers.OrphanOwner{Gone: true}, and no read is
// made. Without ReadOwner, nil is trusted: confirm it yourself, or a live pod may
// lose its finalizer and its completion go uncounted.
//
// A pod that is gone counts as cleaned; other errors of the patch are returned for
// the caller to retry. A pod whose removal the owner's sync already had accepted,
// which the cache does not show yet (the owner finished in that sync), is left
// alone with finalizers.ReasonRemovalInFlight: no second patch.
func (r *Reconciler) CleanOrphan(ctx context.Context, pod *corev1.Pod, own *finalizers.OrphanOwner) (finalizers.OrphanDecision, error) {
	if pod == nil {
		return finalizers.OrphanDecision{Reason: finalizers.ReasonNoFinalizer, Message: finalizers.ReasonNoFinalizer}, nil
	}
	d := finalizers.DecideOrphan(r.cfg.Owner, pod, own, r.cfg.Name)
	if d.Remove && d.Reason == finalizers.ReasonJobGone && (own == nil || !own.Gone) && r.cfg.ReadOwner != nil {
		ref := r.cfg.Owner.ControllerOf(pod)
		live, err := r.cfg.ReadOwner(ctx, pod.Namespace, ref.Name)
		if err != nil {
			return finalizers.OrphanDecision{}, fmt.Errorf("confirm that the owner %s/%s of orphan pod %s is gone: %w", pod.Namespace, ref.Name, pod.Name, err)
		}
		if live != nil {
			d = finalizers.DecideOrphan(r.cfg.Owner, pod, r.orphanOwner(live), r.cfg.Name)
		}
	}
	if !d.Remove {
		return d, nil
	}
	if r.removalAccepted(pod) {
		// The owner's sync stripped the pod and finished the owner before the pod's
		// event reached the cache: the finalizer is gone already.
		return finalizers.OrphanDecision{Reason: finalizers.ReasonRemovalInFlight, Message: finalizers.ReasonRemovalInFlight}, nil
	}
	patch := finalizers.RemovalPatch(pod, r.cfg.Owner.Finalizer)
	if _, err := r.pods.PatchPod(ctx, pod.Namespace, pod.Name, patch.Type, patch.Data); err != nil && !IsPodGone(err) {
		return d, fmt.Errorf("remove tracking finalizer of orphan pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r.cfg.Logger.V(2).Info("Removed the tracking finalizer of an orphan pod", "pod", pod.Namespace+"/"+pod.Name, "reason", d.Message)
	return d, nil
}

// orphanOwner is what the orphan decision reads of a live owner.
func (r *Reconciler) orphanOwner(w *plan.Workload) *finalizers.OrphanOwner {
	return w.OrphanOwner(r.cfg.Owner)
}

// removalAccepted says whether the owner's sync had the finalizer removal of pod
// accepted, with the cache not showing it yet. A removal of unknown outcome does not
// count: it may not have been applied.
func (r *Reconciler) removalAccepted(pod *corev1.Pod) bool {
	ref := r.cfg.Owner.ControllerOf(pod)
	if ref == nil {
		return false
	}
	key := Key(pod.Namespace, ref.Name)
	return r.cfg.FinalizerRemovals.Has(key, pod.UID) && !r.isUncertain(key, pod.UID)
}

// minPositive returns the smaller of two durations, ignoring those not positive.
func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
