package reconcile

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The Reconciler's record of finalizer removals in flight whose outcome is unknown
// (part of keyState).

// uncertainRemoval is a finalizer removal that failed in a way that leaves unknown
// whether it was applied: the resourceVersion it carried as its precondition, the
// one the cache showed (older when the pod was adopted in the same sync), and when.
type uncertainRemoval struct {
	version string
	cached  string
	at      time.Time
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
//
// pending is the set as it was before pods were listed (FinalizerRemovals.Pending):
// a removal whose event arrives while the sync lists is lowered in the store, but
// the list may still show the pod with its finalizer, so it must count as pending
// for this sync (or the pod would be counted a second time).
func (r *Reconciler) prunePending(key string, pods []*corev1.Pod, pending sets.Set[types.UID], now time.Time) sets.Set[types.UID] {
	fr := r.cfg.FinalizerRemovals
	if pending.Len() == 0 {
		r.mu.Lock()
		if s := r.keys[key]; s != nil {
			s.uncertain = nil
		}
		r.mu.Unlock()
		return nil
	}
	listed := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		if p != nil {
			listed[p.UID] = p
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	var uncertain map[types.UID]uncertainRemoval
	if s != nil {
		uncertain = s.uncertain
	}
	for uid := range pending {
		p, ok := listed[uid]
		u, isUncertain := uncertain[uid]
		switch {
		case !ok:
		case isUncertain && r.cfg.Owner.HasFinalizer(p) && (u.supersededBy(p.ResourceVersion) || now.Sub(u.at) > r.cfg.Expectations.TTL()):
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
	if s != nil && len(uncertain) == 0 {
		s.uncertain = nil
	}
	return pending
}

// isUncertain says whether the finalizer removal of pod uid has an uncertain outcome.
func (r *Reconciler) isUncertain(key string, uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.keys[key]
	if s == nil {
		return false
	}
	_, ok := s.uncertain[uid]
	return ok
}

// noteUncertain remembers that the finalizer removal u of pod uid may or may not
// have been applied.
func (r *Reconciler) noteUncertain(key string, uid types.UID, u uncertainRemoval) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stateLocked(key)
	if s.uncertain == nil {
		s.uncertain = map[types.UID]uncertainRemoval{}
	}
	s.uncertain[uid] = u
}

// supersededBy reports whether a cache showing the pod at resourceVersion seen (with
// its finalizer) proves that the uncertain removal was not applied: seen is neither
// the version the patch was sent for nor the one the cache showed then, and is not
// older than the former (compared as integers when both parse).
func (u uncertainRemoval) supersededBy(seen string) bool {
	if seen == u.version || seen == u.cached {
		return false
	}
	c, ok := compareResourceVersions(seen, u.version)
	return !ok || c > 0
}
