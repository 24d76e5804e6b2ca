package backoff

import (
	"sync"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Store holds one [plainbackoff.Record] per Job key, for controllers that keep the
// job-wide backoff in memory between syncs as upstream does. It is safe for concurrent
// use; the zero value is an empty store ready to use. A Store must not be copied after
// first use.
//
// A zero record and no record mean the same thing, so the store keeps no entry for a
// zero record: its size is bounded by the Jobs whose latest pods failed. Callers still
// Delete the key of a Job that finished or was deleted.
type Store[K comparable] struct {
	mu      sync.RWMutex
	records map[K]plainbackoff.Record
}

// Get returns the record of key, and whether the store has a non-zero record for it.
func (s *Store[K]) Get(key K) (plainbackoff.Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.records[key]
	return r, ok
}

// Set replaces the record of key; a zero rec removes it.
func (s *Store[K]) Set(key K, rec plainbackoff.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setLocked(key, rec)
}

// Update replaces the record of key with f(current), where current is the stored
// record (zero if none), and returns the new record. The read and the write are one
// atomic step: concurrent Updates of one key never lose each other's changes. f runs
// under the store's lock and must not call the Store.
func (s *Store[K]) Update(key K, f func(plainbackoff.Record) plainbackoff.Record) plainbackoff.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := f(s.records[key])
	s.setLocked(key, rec)
	return rec
}

// Delete removes the record of key, if any.
func (s *Store[K]) Delete(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, key)
}

// Len returns the number of keys with a non-zero record.
func (s *Store[K]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.records)
}

func (s *Store[K]) setLocked(key K, rec plainbackoff.Record) {
	if rec.IsZero() {
		delete(s.records, key)
		return
	}
	if s.records == nil {
		s.records = make(map[K]plainbackoff.Record)
	}
	s.records[key] = rec
}
