package reconcile

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/plan"
)

// keyState is what the Reconciler itself remembers about one owner key between
// syncs; the stores of Config (expectations, finalizer removals in flight, backoff
// records) hold the rest. There is one record per key, in Reconciler.keys, guarded by
// Reconciler.mu, and one place that drops it (forgetLocked).
//
// Readers never create a record: a key never synced has none.
type keyState struct {
	// uid is the UID of the owner last synced under the key, when hasUID is set (an
	// owner read without a UID counts as seen).
	uid    types.UID
	hasUID bool
	// write is the last status write the cache has not shown yet, or nil.
	write *lastWrite
	// uncertain holds the finalizer removals whose outcome is unknown, by pod UID.
	uncertain map[types.UID]uncertainRemoval
	// batch is the slow-start batch size the key's creations start at: the last
	// batch size that succeeded, halved after a failed batch (0: never set).
	batch int
	// uncertainCreates holds when creations whose outcome is unknown were sent;
	// each is dropped from the expectations after UncertainCreationTimeout.
	uncertainCreates []time.Time
	// refused holds the names of pods whose creation the API server answered
	// AlreadyExists and that are not the owner's pods (see refusal), until a
	// listed pod has the name.
	refused map[string]refusal
	// children holds the child Jobs a SyncChildJobs created or deleted that the
	// cache has not shown yet, or nil.
	children *childWrites
	// pods is how many pods the last sync listed: the size the batch period
	// grows with (batchPeriod).
	pods int
	// facts is what the plans of the owner read of its pods, kept for its next
	// sync (Config.ImmutablePods), or nil.
	facts *plan.FactCache
}

// lastWrite remembers the last status this reconciler wrote for an owner, to detect
// a cache that has not caught up with it.
type lastWrite struct {
	version string   // resourceVersion returned by the write
	older   []string // versions seen before it, for non-numeric comparisons
	// owner is the owner the write returned: what a sync uses while the cache has
	// not caught up with it.
	owner written
}

// written is the owner a status write returned, as the sync that wrote it
// converted it: one field is set, the one of the sync's shape. A sync that finds
// another shape's field set waits for the cache.
type written struct {
	job   *plan.Workload      // Sync
	roles *ownedpods.Workload // SyncRoles
	group *childjobs.Input    // SyncChildJobs
}

// stateLocked returns the record of key, creating it. r.mu must be held.
func (r *Reconciler) stateLocked(key string) *keyState {
	s := r.keys[key]
	if s == nil {
		s = &keyState{}
		r.keys[key] = s
	}
	return s
}

// factsOf returns the plan.FactCache of key, made on first use, or nil unless
// Config.ImmutablePods.
func (r *Reconciler) factsOf(key string) *plan.FactCache {
	if !r.cfg.ImmutablePods {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	if s.facts == nil {
		s.facts = new(plan.FactCache)
	}
	return s.facts
}

// Forget drops everything the Reconciler keeps about the Job key: expectations,
// finalizer removals in flight, the backoff record, the Job's UID, its last status
// write and what its plans read of its pods (Config.ImmutablePods). Call it when the Job is deleted or not found; Sync calls it itself when it
// sees a new UID under a known key (the Job was recreated).
func (r *Reconciler) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forgetLocked(key)
}

// forgetLocked is the one place that forgets a key. r.mu must be held.
func (r *Reconciler) forgetLocked(key string) {
	r.cfg.Expectations.Delete(key)
	r.cfg.FinalizerRemovals.Delete(key)
	r.cfg.BackoffStore.Delete(key)
	delete(r.keys, key)
}

// forgetUID forgets key unless its state belongs to a Job with another UID.
func (r *Reconciler) forgetUID(key string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.keys[key]; s != nil && s.hasUID && uid != "" && s.uid != uid {
		return
	}
	r.forgetLocked(key)
}

// noteUID remembers the UID of the Job under key and forgets the key's state when
// the UID changed: the Job was deleted and recreated under the same name.
func (r *Reconciler) noteUID(key string, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.keys[key]; s != nil && s.hasUID && s.uid != uid {
		r.forgetLocked(key)
	}
	s := r.stateLocked(key)
	s.uid, s.hasUID = uid, true
}

// knownUID returns the UID last seen under key.
func (r *Reconciler) knownUID(key string) (types.UID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.keys[key]; s != nil && s.hasUID {
		return s.uid, true
	}
	return "", false
}

// stale reports whether version is older than the last status this reconciler wrote
// under key, with the owner that write returned (nil when unknown), and forgets the
// write once the cache has caught up.
func (r *Reconciler) stale(key, version string) (bool, written) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	if s == nil || s.write == nil {
		return false, written{}
	}
	if caughtUp(*s.write, version) {
		s.write = nil
		return false, written{}
	}
	return true, s.write.owner
}

// caughtUp compares resourceVersions as integers when both parse (etcd revisions
// do), and otherwise treats version as stale only when it is one this reconciler saw
// before its write: resourceVersions are opaque strings to clients.
func caughtUp(w lastWrite, version string) bool {
	if c, ok := compareResourceVersions(version, w.version); ok {
		return c >= 0
	}
	return !slices.Contains(w.older, version)
}

// recordWrite remembers a status write that moved the owner from version before to
// after, returning out.
func (r *Reconciler) recordWrite(key, before, after string, out written) {
	if before == after {
		return // the server changed nothing: there is nothing for the cache to show
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	if s.write == nil {
		s.write = &lastWrite{}
	}
	s.write.record(before, after, out)
}

// record moves w on to the write that took the owner from version before to after,
// returning out.
func (w *lastWrite) record(before, after string, out written) {
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
	w.owner = out
}

// pruneDeletions observes the deletions of key whose pods are no longer
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
			exp.DeletionObserved(key, uid)
		} else {
			left++
		}
	}
	return left == 0
}

// batchSize is the size of the first creation batch of the Job under key.
func (r *Reconciler) batchSize(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.keys[key]; s != nil && s.batch > 0 {
		return s.batch
	}
	return slowStartInitialBatchSize
}

func (r *Reconciler) setBatchSize(key string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stateLocked(key).batch = n
}
