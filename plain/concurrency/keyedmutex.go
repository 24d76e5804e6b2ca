package concurrency

import (
	"slices"
	"sync"
)

// KeyedMutex is a set of try-locks, one per key, for serialising work on a key
// (a job name, a queue) without blocking a worker: a worker that cannot take
// the lock requeues its item instead of waiting. Plank takes such a lock per
// job name and per queue around its concurrency check, so that two workers
// cannot both see a free slot and both start a job.
//
// A key exists only while it is held: unlocking deletes it, so memory is
// proportional to the keys held at the moment, not to every key ever seen.
//
// The zero value is ready to use. A KeyedMutex must not be copied after first
// use. All methods are safe for concurrent use and never block for longer
// than it takes to update a map.
type KeyedMutex[K comparable] struct {
	mu sync.Mutex
	// held maps each locked key to the generation of the lock that holds it,
	// so that a stale unlock (a second call) cannot release a later holder.
	held map[K]uint64
	gen  uint64
	peak int // the most keys held since held was last allocated
}

// shrinkAbove is the peak size above which an emptied map is dropped so that
// its memory is returned; smaller maps are kept to avoid reallocating one on
// every lock.
const shrinkAbove = 64

func noop() {}

// TryLock takes the lock of key if no one holds it. It returns ok false, and
// a no-op unlock, when the key is held. Otherwise unlock releases the key; it
// may be called more than once and from any goroutine, later calls do nothing.
func (m *KeyedMutex[K]) TryLock(key K) (unlock func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, busy := m.held[key]; busy {
		return noop, false
	}
	gen := m.take(1)
	m.held[key] = gen
	m.peak = max(m.peak, len(m.held))
	return func() { m.release(gen, key) }, true
}

// TryLockAll takes the locks of all keys, or none of them: it returns ok
// false, and a no-op unlock, when any key is held. Repeated keys are locked
// once. With no keys it succeeds and unlock does nothing. unlock releases all
// of them and may be called more than once. The keys slice is not retained.
//
// Taking all locks at once under one mutex avoids the lock-order problems of
// taking several keys one by one.
func (m *KeyedMutex[K]) TryLockAll(keys ...K) (unlock func(), ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if _, busy := m.held[k]; busy {
			return noop, false
		}
	}
	if len(keys) == 0 {
		return noop, true
	}
	gen := m.take(len(keys))
	for _, k := range keys {
		m.held[k] = gen
	}
	m.peak = max(m.peak, len(m.held))
	own := slices.Clone(keys)
	return func() { m.release(gen, own...) }, true
}

// take returns a new generation and makes sure held exists. m.mu is held.
func (m *KeyedMutex[K]) take(hint int) uint64 {
	if m.held == nil {
		m.held = make(map[K]uint64, hint)
	}
	m.gen++
	return m.gen
}

// Held reports whether key is locked at this moment. The answer may be stale
// by the time the caller reads it; it is meant for tests and metrics.
func (m *KeyedMutex[K]) Held(key K) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.held[key]
	return ok
}

// Len returns the number of keys locked at this moment.
func (m *KeyedMutex[K]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.held)
}

// release unlocks the keys that the lock of generation gen still holds.
func (m *KeyedMutex[K]) release(gen uint64, keys ...K) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if g, ok := m.held[k]; ok && g == gen {
			delete(m.held, k)
		}
	}
	if len(m.held) == 0 && m.peak > shrinkAbove {
		// A Go map keeps its buckets after deletes; dropping the emptied map
		// returns them after a burst of many keys.
		m.held, m.peak = nil, 0
	}
}
