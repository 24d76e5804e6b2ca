package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
)

// Reconciler runs the sync of one Job at a time against a Client: it checks the
// expectations, computes a plan.Plan and executes it in the crash-safe order. It keeps
// per-Job state (expectations, finalizer removals in flight, backoff records, the UID
// and the last status version it wrote) keyed by "namespace/name".
//
// A Reconciler is safe for concurrent use by several workers as long as one Job key
// is synced by one worker at a time (a workqueue guarantees that).
type Reconciler struct {
	cfg    Config
	client Client

	mu        sync.Mutex
	uids      map[string]types.UID
	writes    map[string]lastWrite
	uncertain map[string]map[types.UID]uncertainRemoval
	// batch is the slow-start batch size each Job's creations start at: the last
	// batch size that succeeded, halved after a failed batch.
	batch map[string]int
	// uncertainCreates holds, per Job, when creations whose outcome is unknown were
	// sent; each is dropped from the expectations after UncertainCreationTimeout.
	uncertainCreates map[string][]time.Time
}

// uncertainRemoval is a finalizer removal that failed in a way that leaves unknown
// whether it was applied: the resourceVersion it carried as its precondition, the
// one the cache showed (older when the pod was adopted in the same sync), and when.
type uncertainRemoval struct {
	version string
	cached  string
	at      time.Time
}

// lastWrite remembers the last status this reconciler wrote for a Job, to detect a
// cache that has not caught up with it.
type lastWrite struct {
	version string   // resourceVersion returned by the write
	older   []string // versions seen before it, for non-numeric comparisons
	// job is the Job the write returned: what a sync uses while the cache has not
	// caught up with it.
	job *batchv1.Job
}

// Result is the outcome of a sync.
type Result struct {
	// RequeueAfter, when positive, asks for another sync after that delay (backoff,
	// active deadline, or a stale cache).
	RequeueAfter time.Duration
	// Requeue asks for another sync soon, without an error: a status write met a
	// conflict, a pod vanished while being adopted or released, or changed since
	// the plan before its release or its finalizer removal.
	Requeue bool
	// Skipped says why the Job was not acted on, or is empty: another controller
	// manages it, it has finished, the cache is stale, or the Job is invalid.
	Skipped string
	// Plan is the plan the sync executed (nil when none was computed).
	Plan *plan.Plan
	// StatusWrites, FinalizersRemoved, Deleted and Created count the API calls
	// that succeeded.
	StatusWrites, FinalizersRemoved, Deleted, Created int
}

// PodLister lists the pods of a Job from the caller's cache: the pods controlled by
// the Job and the orphans in its namespace matching its selector.
type PodLister func(job *batchv1.Job) ([]*corev1.Pod, error)

// ErrInvalidArgument is wrapped by the errors of calls given a nil Job or client.
var ErrInvalidArgument = errors.New("invalid argument")

// New returns a Reconciler for cfg that talks to client. It fails, with an error
// wrapping ErrInvalidConfig that names every bad field, when cfg.Name is empty or a
// value is out of range.
func New(cfg Config, client Client) (*Reconciler, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: client is nil", ErrInvalidArgument)
	}
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Reconciler{cfg: c, client: client, uids: map[string]types.UID{}, writes: map[string]lastWrite{},
		uncertain: map[string]map[types.UID]uncertainRemoval{}, batch: map[string]int{},
		uncertainCreates: map[string][]time.Time{}}, nil
}

// Key returns the key of a Job in the Reconciler's stores: "namespace/name".
func Key(job *batchv1.Job) string { return KeyFor(job.Namespace, job.Name) }

// KeyFor returns the key of the Job namespace/name.
func KeyFor(namespace, name string) string { return namespace + "/" + name }

// Name returns the name the Reconciler answers to in spec.managedBy.
func (r *Reconciler) Name() string { return r.cfg.Name }

// Config returns the Reconciler's configuration with its defaults filled in (the
// stores included).
func (r *Reconciler) Config() Config { return r.cfg }

// Forget drops everything the Reconciler keeps about the Job key: expectations,
// finalizer removals in flight, the backoff record, the Job's UID and its last status
// write. Call it when the Job is deleted or not found; Sync calls it itself when it
// sees a new UID under a known key (the Job was recreated).
func (r *Reconciler) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(key)
}

func (r *Reconciler) forgetLocked(key string) {
	r.cfg.Expectations.Delete(key)
	r.cfg.FinalizerRemovals.Delete(key)
	r.cfg.BackoffStore.Delete(key)
	delete(r.uids, key)
	delete(r.writes, key)
	delete(r.uncertain, key)
	delete(r.batch, key)
	delete(r.uncertainCreates, key)
}

// JobDeleted is Forget for a deleted Job, keyed by its UID: when a Job recreated under
// the same name has already been synced, the late delete event of the old one leaves
// the new Job's state (its expectations above all) alone. A nil job is ignored.
func (r *Reconciler) JobDeleted(job *batchv1.Job) {
	if job != nil {
		r.forgetUID(Key(job), job.UID)
	}
}

// forgetUID forgets key unless its state belongs to a Job with another UID.
func (r *Reconciler) forgetUID(key string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if known, ok := r.uids[key]; ok && uid != "" && known != uid {
		return
	}
	r.forgetLocked(key)
}

// Sync syncs job with pods, the Job's pods as listed from the caller's cache (see
// PodLister). It is SyncWith with a lister that returns pods.
//
// The expectations are checked when Sync starts; a caller with a live informer should
// prefer SyncWith, which lists only after that check: a pod created by the previous
// sync can arrive in the cache between an earlier list and the check, and the Job
// would then look one pod short.
func (r *Reconciler) Sync(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (Result, error) {
	return r.SyncWith(ctx, job, func(*batchv1.Job) ([]*corev1.Pod, error) { return pods, nil })
}

// SyncWith syncs job, as read from the caller's cache, listing its pods with list
// after checking the expectations. It:
//
//  1. forgets the Job's state when job has a new UID under a known key;
//  2. skips the Job (RequeueAfter StaleCacheRequeue) when job is older than the last
//     status this Reconciler wrote for it;
//  3. checks the expectations, lists the pods and computes the plan;
//  4. executes the plan: adopt and release; write RecordStatus; remove finalizers in
//     parallel; write the settled status; delete; create in slow-start batches.
//
// A conflict on a status write ends the sync with Result.Requeue and no error. A
// failed pod creation, deletion or finalizer removal does not stop the other calls;
// the errors are returned together after the sync, so the caller requeues with rate
// limiting. A Job the plan cannot handle (an unknown completion mode...) gets a
// Warning event and Result.Skipped, without error: retrying would not help.
func (r *Reconciler) SyncWith(ctx context.Context, job *batchv1.Job, list PodLister) (Result, error) {
	if job == nil {
		return Result{}, fmt.Errorf("%w: Sync: job is nil", ErrInvalidArgument)
	}
	if list == nil {
		return Result{}, fmt.Errorf("%w: SyncWith: list is nil", ErrInvalidArgument)
	}
	start := r.cfg.Clock.Now()
	key := Key(job)
	ex := &execution{
		r:      r,
		ctx:    ctx,
		key:    key,
		orig:   job,
		job:    job,
		log:    r.cfg.Logger.WithValues("job", key),
		mode:   completionMode(job),
		action: ActionReconciling,
	}
	res, err := ex.sync(list, start)
	result := ResultSuccess
	if err != nil {
		result = ResultError
	}
	r.cfg.Metrics.JobSync(ex.mode, result, ex.action, r.cfg.Clock.Since(start))
	return res, err
}

func (ex *execution) sync(list PodLister, now time.Time) (res Result, err error) {
	r, key, job := ex.r, ex.key, ex.orig
	r.noteUID(key, job.UID)
	if stale, written := r.stale(key, job.ResourceVersion); stale {
		if written == nil || written.UID != job.UID {
			r.cfg.Metrics.StaleSyncSkipped()
			ex.log.V(2).Info("Cached Job is older than the last status write; waiting for the cache", "resourceVersion", job.ResourceVersion)
			return Result{RequeueAfter: r.cfg.StaleCacheRequeue, Skipped: "cache older than the last status write"}, nil
		}
		// The Job this reconciler wrote last is newer than the cached one, spec
		// included (a write returns the whole object): sync from it rather than wait
		// one event lag for the cache to show it.
		ex.log.V(4).Info("Cached Job is older than the last status write; syncing the Job as written", "resourceVersion", job.ResourceVersion, "written", written.ResourceVersion)
		job = written
		ex.orig, ex.job = job, job
	}
	if wait := r.expireUncertainCreates(key, now); wait > 0 {
		defer func() { res.RequeueAfter = minPositive(res.RequeueAfter, wait) }()
	}
	exp := r.cfg.Expectations.Get(key)
	satisfied := exp.Satisfied
	pods, err := list(job)
	if err != nil {
		return Result{}, fmt.Errorf("list pods of job %s: %w", key, err)
	}
	if exp.DeletionUIDs > 0 && r.pruneDeletions(key, pods) && !satisfied {
		// Nothing else was outstanding when the expectations were checked, before
		// the list: every pod created earlier is in it.
		satisfied = exp.Creations == 0 && exp.Deletions == 0
	}
	pending := r.prunePending(key, pods, now)
	rec, _ := r.cfg.BackoffStore.Get(key)
	p, err := plan.Compute(plan.Input{
		Job:                      job,
		Pods:                     pods,
		ControllerName:           r.cfg.Name,
		ExpectationsSatisfied:    satisfied,
		PendingFinalizerRemovals: pending,
		Backoff:                  rec,
		Now:                      now,
		Options:                  r.cfg.planOptions(),
	})
	if err != nil {
		if errors.Is(err, plan.ErrInvalidJob) {
			r.cfg.Events.Eventf(job, corev1.EventTypeWarning, ReasonInvalidJob, "%v", err)
			ex.log.Info("Job cannot be synced", "err", err.Error())
			return Result{Skipped: err.Error()}, nil
		}
		return Result{}, fmt.Errorf("plan job %s: %w", key, err)
	}
	for _, w := range p.Warnings {
		ex.log.Info("Bad input worked around", "warning", w)
	}
	if p.Skip != "" {
		if jobFinished(job) {
			r.cfg.BackoffStore.Delete(key)
		}
		ex.log.V(4).Info("Skipping Job", "reason", p.Skip)
		return Result{Skipped: p.Skip, Plan: p}, nil
	}
	ex.plan = p
	ex.res.Plan = p
	ex.log.V(4).Info("Plan", "satisfied", satisfied, "plan", p.String())
	return ex.execute()
}

// noteUID remembers the UID of the Job under key and forgets the key's state when
// the UID changed: the Job was deleted and recreated under the same name.
func (r *Reconciler) noteUID(key string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.uids[key]; ok && old != uid {
		r.forgetLocked(key)
	}
	r.uids[key] = uid
}

// knownUID returns the UID last seen under key.
func (r *Reconciler) knownUID(key string) (types.UID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	uid, ok := r.uids[key]
	return uid, ok
}

// stale reports whether version is older than the last status this reconciler wrote
// under key, with the Job that write returned (nil when unknown), and forgets the
// write once the cache has caught up.
func (r *Reconciler) stale(key, version string) (bool, *batchv1.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.writes[key]
	if !ok {
		return false, nil
	}
	if caughtUp(w, version) {
		delete(r.writes, key)
		return false, nil
	}
	return true, w.job
}

// caughtUp compares resourceVersions as integers when both parse (etcd revisions
// do), and otherwise treats version as stale only when it is one this reconciler saw
// before its write: resourceVersions are opaque strings to clients.
func caughtUp(w lastWrite, version string) bool {
	a, errA := strconv.ParseUint(version, 10, 64)
	b, errB := strconv.ParseUint(w.version, 10, 64)
	if errA == nil && errB == nil {
		return a >= b
	}
	return !slices.Contains(w.older, version)
}

// recordWrite remembers a status write that moved the Job from version before to
// after.
func (r *Reconciler) recordWrite(key, before string, written *batchv1.Job) {
	after := written.ResourceVersion
	if before == after {
		return // the server changed nothing: there is nothing for the cache to show
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.writes[key]
	if w.version != before { // a new sequence of writes
		w.older = w.older[:0]
	}
	if before != "" && !slices.Contains(w.older, before) {
		w.older = append(w.older, before)
	}
	if len(w.older) > 8 { // bounded: only the versions of the latest writes matter
		w.older = w.older[len(w.older)-8:]
	}
	w.version = after
	w.job = written
	r.writes[key] = w
}

// pruneDeletions observes the UID-tracked deletions of key whose pods are no longer
// listed, or are listed with a deletionTimestamp: their event was lost (a relist
// found the pod gone), and waiting for it would hold the Job until the
// expectations expire. It reports whether no deletion is outstanding any more.
func (r *Reconciler) pruneDeletions(key string, pods []*corev1.Pod) bool {
	exp := r.cfg.Expectations
	uids := exp.PendingDeletionUIDs(key)
	if uids.Len() == 0 {
		return true
	}
	deleting := make(map[types.UID]bool, len(pods))
	for _, p := range pods {
		if p != nil {
			deleting[p.UID] = p.DeletionTimestamp != nil
		}
	}
	left := 0
	for uid := range uids {
		if d, listed := deleting[uid]; !listed || d {
			exp.DeletionObservedUID(key, uid)
		} else {
			left++
		}
	}
	return left == 0
}

// prunePending returns the finalizer removals still in flight for key, after
// dropping those of pods no longer listed: the cache has processed their deletion (or
// they left the Job), so no event will ever clear them.
//
// A removal whose outcome is uncertain (see noteUncertain) stays pending until the
// cache shows the pod with the finalizer at a newer resourceVersion than the one the
// patch was sent for (the patch, which carried that version as a precondition, was
// not applied), or until the expectations TTL has passed. A pod adopted in the sync
// that sent the patch may still show at its pre-adoption version: that proves
// nothing either.
func (r *Reconciler) prunePending(key string, pods []*corev1.Pod, now time.Time) sets.Set[types.UID] {
	fr := r.cfg.FinalizerRemovals
	if fr.PendingCount(key) == 0 {
		r.mu.Lock()
		delete(r.uncertain, key)
		r.mu.Unlock()
		return nil
	}
	pending := fr.Pending(key)
	listed := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		if p != nil {
			listed[p.UID] = p
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	uncertain := r.uncertain[key]
	for uid := range pending {
		p, ok := listed[uid]
		u, isUncertain := uncertain[uid]
		switch {
		case !ok:
		case isUncertain && finalizers.Has(p) && (u.supersededBy(p.ResourceVersion) || now.Sub(u.at) > r.cfg.Expectations.TTL()):
		default:
			continue
		}
		fr.Observed(key, uid)
		pending.Delete(uid)
		delete(uncertain, uid)
	}
	for uid := range uncertain {
		if !pending.Has(uid) {
			delete(uncertain, uid)
		}
	}
	if len(uncertain) == 0 {
		delete(r.uncertain, key)
	}
	return pending
}

// isUncertain says whether the finalizer removal of pod uid has an uncertain outcome.
func (r *Reconciler) isUncertain(key string, uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.uncertain[key][uid]
	return ok
}

// noteUncertain remembers that the finalizer removal u of pod uid may or may not
// have been applied.
func (r *Reconciler) noteUncertain(key string, uid types.UID, u uncertainRemoval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.uncertain[key] == nil {
		r.uncertain[key] = map[types.UID]uncertainRemoval{}
	}
	r.uncertain[key][uid] = u
}

// supersededBy reports whether a cache showing the pod at resourceVersion seen (with
// its finalizer) proves that the uncertain removal was not applied: seen is neither
// the version the patch was sent for nor the one the cache showed then, and is not
// older than the former (compared as integers when both parse).
func (u uncertainRemoval) supersededBy(seen string) bool {
	if seen == u.version || seen == u.cached {
		return false
	}
	a, errA := strconv.ParseUint(seen, 10, 64)
	b, errB := strconv.ParseUint(u.version, 10, 64)
	return errA != nil || errB != nil || a > b
}

func completionMode(job *batchv1.Job) string {
	if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
		return CompletionModeIndexed
	}
	return CompletionModeNonIndexed
}

func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// DecideOrphan decides whether the tracking finalizer of pod may be removed outside
// its Job's sync (finalizers.DecideOrphan with this Reconciler's name). job is the Job
// the caller found under the name of the pod's controller reference, or nil.
func (r *Reconciler) DecideOrphan(pod *corev1.Pod, job *batchv1.Job) finalizers.OrphanDecision {
	return finalizers.DecideOrphan(pod, job, r.cfg.Name)
}

// CleanOrphan removes the tracking finalizer of pod when DecideOrphan allows it, and
// returns the decision. A pod that is gone counts as cleaned; other errors are
// returned for the caller to retry.
//
// A nil job means the pod's Job does not exist, which frees the pod. Pods and Jobs
// come from separate watches, so a pod can reach a cache before its Job: before
// passing nil because the cache has no such Job, confirm it with a read from the API
// server (the example controllers do), or a live pod may lose its finalizer and its
// completion go uncounted.
func (r *Reconciler) CleanOrphan(ctx context.Context, pod *corev1.Pod, job *batchv1.Job) (finalizers.OrphanDecision, error) {
	if pod == nil {
		return finalizers.OrphanDecision{Reason: finalizers.ReasonNoFinalizer}, nil
	}
	d := r.DecideOrphan(pod, job)
	if !d.Remove {
		return d, nil
	}
	patch := finalizers.RemovalPatch(pod)
	if _, err := r.client.PatchPod(ctx, pod.Namespace, pod.Name, patch.Type, patch.Data); err != nil && !IsPodGone(err) {
		return d, fmt.Errorf("remove tracking finalizer of orphan pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	r.cfg.Logger.V(2).Info("Removed the tracking finalizer of an orphan pod", "pod", pod.Namespace+"/"+pod.Name, "reason", d.Reason)
	return d, nil
}

// noteUncertainCreate remembers a creation of the Job under key whose outcome is
// unknown.
func (r *Reconciler) noteUncertainCreate(key string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uncertainCreates[key] = append(r.uncertainCreates[key], at)
}

// expireUncertainCreates drops from the expectations of key the creations of unknown
// outcome sent UncertainCreationTimeout ago or more, and returns how long until the
// next one expires (0 when none is left).
func (r *Reconciler) expireUncertainCreates(key string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	times := r.uncertainCreates[key]
	if len(times) == 0 {
		return 0
	}
	timeout := r.cfg.UncertainCreationTimeout
	kept := times[:0]
	for _, at := range times {
		if now.Sub(at) >= timeout {
			if !r.cfg.Expectations.Satisfied(key) {
				r.cfg.Expectations.CreationObserved(key)
			}
			continue
		}
		kept = append(kept, at)
	}
	if len(kept) == 0 {
		delete(r.uncertainCreates, key)
		return 0
	}
	r.uncertainCreates[key] = kept
	return kept[0].Add(timeout).Sub(now)
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
