package expectations

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// FinalizerRemovals records, per key (typically a Job), the UIDs of the pods
// whose tracking-finalizer removal this process has requested and not yet
// seen in the informer. While a UID is pending, the controller must not count
// that pod again. Unlike Expectations, entries never expire: a removal is
// observed either as an update without the finalizer or as the pod's deletion.
//
// The zero value is ready to use. A FinalizerRemovals must not be copied after
// first use. All methods are safe for concurrent use.
type FinalizerRemovals[K comparable] struct {
	mu      sync.Mutex
	pending map[K]sets.Set[types.UID] // no empty sets are kept
}

// NewFinalizerRemovals returns an empty FinalizerRemovals. It is the same as
// new(FinalizerRemovals[K]).
func NewFinalizerRemovals[K comparable]() *FinalizerRemovals[K] {
	return &FinalizerRemovals[K]{}
}

// Expect adds uids to the pending removals of key. A UID already pending stays
// pending once. Empty UIDs are skipped and reported with an *InputError naming
// the first of them (such a pod could never be observed, and with no TTL its
// key would wait forever); the valid UIDs are still added.
func (f *FinalizerRemovals[K]) Expect(key K, uids ...types.UID) error {
	var err error
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.pending[key]
	for i, uid := range uids {
		if uid == "" {
			if err == nil {
				err = emptyUID("FinalizerRemovals.Expect", i)
			}
			continue
		}
		if s == nil {
			if f.pending == nil {
				f.pending = make(map[K]sets.Set[types.UID])
			}
			s = make(sets.Set[types.UID], len(uids)-i)
			f.pending[key] = s
		}
		s.Insert(uid)
	}
	return err
}

// Observed removes uid from the pending removals of key and reports whether it
// was pending. Call it when an update shows the pod without the tracking
// finalizer, when the pod is deleted, or when the removal request failed.
// Observing a UID again, or one never expected, does nothing.
func (f *FinalizerRemovals[K]) Observed(key K, uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.pending[key]
	if !ok || !s.Has(uid) {
		return false
	}
	delete(s, uid)
	if len(s) == 0 {
		delete(f.pending, key)
	}
	return true
}

// Has reports whether the removal of uid's finalizer is pending for key. It
// does not allocate.
func (f *FinalizerRemovals[K]) Has(key K, uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending[key].Has(uid)
}

// Pending returns a copy of the pending UIDs of key, which the caller may
// change; it is empty, not nil, when nothing is pending. It costs O(n) in the
// pending UIDs; use Has or PendingCount when a copy is not needed.
func (f *FinalizerRemovals[K]) Pending(key K) sets.Set[types.UID] {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.pending[key]
	if s == nil {
		return sets.New[types.UID]()
	}
	return s.Clone()
}

// PendingCount returns the number of pending UIDs of key.
func (f *FinalizerRemovals[K]) PendingCount(key K) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending[key])
}

// Delete forgets all pending removals of key. Call it when the object behind
// key is deleted.
func (f *FinalizerRemovals[K]) Delete(key K) {
	f.mu.Lock()
	delete(f.pending, key)
	f.mu.Unlock()
}

// Len returns the number of keys with at least one pending removal.
func (f *FinalizerRemovals[K]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}
