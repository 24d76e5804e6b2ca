package expectations

import (
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
)

// defaultTTL is how long a record waits for its observations before Satisfied
// gives up on it. It matches the Job controller's ExpectationsTimeout.
const defaultTTL = 5 * time.Minute

// Config configures an Expectations. The zero value is ready to use.
type Config struct {
	// Clock supplies the time a record is set and the time it is checked for
	// expiry. Nil means the real clock. A clock from k8s.io/utils/clock/testing
	// makes expiry deterministic in tests.
	Clock clock.PassiveClock
	// TTL is how long after it was last set or raised a record that still
	// waits for observations is treated as satisfied anyway. Zero means
	// 5 minutes, the Job controller's ExpectationsTimeout. Negative is rejected
	// by New: there is no "never expire", because a lost watch event would then
	// block its key forever; pick a large TTL instead.
	TTL time.Duration
}

// Expectations records, per key (typically a Job's "namespace/name" or
// types.NamespacedName), how many pod creations and which pod deletions (by
// UID) that this process asked for have not been seen in the informer yet. A
// key is satisfied when nothing is
// outstanding, when it has no record, or when its record is older than the TTL.
//
// The zero value is usable and behaves as New(Config{}). An Expectations must
// not be copied after first use. All methods are safe for concurrent use.
type Expectations[K comparable] struct {
	mu      sync.Mutex
	clock   clock.PassiveClock // nil: real clock
	ttl     time.Duration      // 0: defaultTTL
	records map[K]*record
}

// record is the state of one key. The count never goes below zero.
type record struct {
	adds  int
	uids  map[types.UID]struct{} // deletions still outstanding; nil when none
	setAt time.Time
}

func (r *record) fulfilled() bool { return r.adds == 0 && len(r.uids) == 0 }

// New returns an empty Expectations configured by cfg. It fails with an
// *InputError only when cfg.TTL is negative.
func New[K comparable](cfg Config) (*Expectations[K], error) {
	if cfg.TTL < 0 {
		return nil, &InputError{Op: "New", Field: "Config.TTL", Value: cfg.TTL.String(),
			Reason: "must not be negative (zero means the default, " + defaultTTL.String() + ")"}
	}
	return &Expectations[K]{clock: cfg.Clock, ttl: cfg.TTL}, nil
}

func (e *Expectations[K]) now() time.Time {
	if e.clock == nil {
		return clock.RealClock{}.Now()
	}
	return e.clock.Now()
}

// TTL returns the effective time-to-live of a record.
func (e *Expectations[K]) TTL() time.Duration {
	if e.ttl == 0 {
		return defaultTTL
	}
	return e.ttl
}

// expired reports whether a record set at setAt is stale at now. Like
// upstream, a record exactly TTL old is still live.
func (e *Expectations[K]) expired(setAt, now time.Time) bool {
	return now.Sub(setAt) > e.TTL()
}

// recordLocked returns the record of key, creating an empty one if needed.
func (e *Expectations[K]) recordLocked(key K) *record {
	r, ok := e.records[key]
	if !ok {
		if e.records == nil {
			e.records = make(map[K]*record)
		}
		r = &record{}
		e.records[key] = r
	}
	return r
}

// ExpectCreations replaces the record of key with one that waits for n
// creations and no deletions, and sets its time to now. A negative n is
// rejected with an *InputError and the record is left unchanged; n == 0
// leaves a record that is satisfied.
func (e *Expectations[K]) ExpectCreations(key K, n int) error {
	if n < 0 {
		return negativeCount("ExpectCreations", n)
	}
	e.replace(key, n, nil)
	return nil
}

// ExpectDeletions replaces the record of key with one that waits for the
// deletion of each distinct pod UID in uids and no creations, and sets its
// time to now. Observe them with DeletionObserved. Empty UIDs are skipped and
// reported with an *InputError naming the first of them; the record is still
// replaced with the valid UIDs. The set is built before the lock is taken, so a large
// uids slice does not block other keys.
func (e *Expectations[K]) ExpectDeletions(key K, uids ...types.UID) error {
	var set map[types.UID]struct{}
	var err error
	if len(uids) > 0 {
		set = make(map[types.UID]struct{}, len(uids))
		for i, uid := range uids {
			if uid == "" {
				if err == nil {
					err = emptyUID("ExpectDeletions", i)
				}
				continue
			}
			set[uid] = struct{}{}
		}
		if len(set) == 0 {
			set = nil
		}
	}
	e.replace(key, 0, set)
	return err
}

func (e *Expectations[K]) replace(key K, adds int, uids map[types.UID]struct{}) {
	now := e.now()
	e.mu.Lock()
	r := e.recordLocked(key)
	r.adds, r.uids, r.setAt = adds, uids, now
	e.mu.Unlock()
}

// RaiseCreations adds n to the creations that key waits for and sets the
// record's time to now, creating the record if there is none. Call it before
// each create request; if the request fails, call CreationObserved (or Lower).
// A record that had already expired is reset before the raise, so events
// lost long ago do not hold the key back again. n == 0 does nothing (in
// particular it does not extend the TTL); a negative n is rejected with an
// *InputError and changes nothing.
func (e *Expectations[K]) RaiseCreations(key K, n int) error {
	if n < 0 {
		return negativeCount("RaiseCreations", n)
	}
	if n > 0 {
		e.raise(key, n, nil)
	}
	return nil
}

// RaiseDeletions adds the pod UIDs in uids to the deletions that key waits
// for, with the same rules as RaiseCreations: call it before each delete
// request; if the request surely fails, call DeletionObserved. A UID already
// outstanding is not counted twice. Empty UIDs are skipped and reported with
// an *InputError naming the first of them; the valid ones are still added. If
// no UID is valid, nothing changes.
func (e *Expectations[K]) RaiseDeletions(key K, uids ...types.UID) error {
	valid := 0
	var err error
	for i, uid := range uids {
		if uid != "" {
			valid++
		} else if err == nil {
			err = emptyUID("RaiseDeletions", i)
		}
	}
	if valid > 0 {
		e.raise(key, 0, uids)
	}
	return err
}

func (e *Expectations[K]) raise(key K, adds int, uids []types.UID) {
	now := e.now()
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.recordLocked(key)
	if e.expired(r.setAt, now) { // a new record is empty either way
		r.adds, r.uids = 0, nil
	}
	r.adds = addSat(r.adds, adds)
	for _, uid := range uids {
		if uid == "" {
			continue
		}
		if r.uids == nil {
			r.uids = make(map[types.UID]struct{}, len(uids))
		}
		r.uids[uid] = struct{}{}
	}
	r.setAt = now
}

// addSat adds two non-negative ints, stopping at math.MaxInt.
func addSat(a, b int) int {
	if b > math.MaxInt-a {
		return math.MaxInt
	}
	return a + b
}

// CreationObserved lowers the creations that key waits for by one: call it
// when the informer shows a pod this process created, or when a create
// request surely failed (OutcomeUnknown(err) is false) or was never sent. A
// create that timed out may have stored the pod: giving it back lets a sync on a
// cache that does not show the pod yet create a second one. The count stops at
// zero. It does nothing if key has no record, and it does not change the
// record's time.
func (e *Expectations[K]) CreationObserved(key K) { e.lower(key, 1) }

// Lower lowers the creations that key waits for by n, with the same rules as
// CreationObserved: for example, when the rest of a batch of creates is
// dropped after an error. A negative n is rejected with an *InputError and
// nothing changes.
func (e *Expectations[K]) Lower(key K, n int) error {
	if n < 0 {
		return negativeCount("Lower", n)
	}
	e.lower(key, n)
	return nil
}

func (e *Expectations[K]) lower(key K, n int) {
	e.mu.Lock()
	if r, ok := e.records[key]; ok {
		r.adds = max(r.adds-n, 0)
	}
	e.mu.Unlock()
}

// DeletionObserved removes uid from the deletions that key waits for, and
// reports whether it was there: call it when the informer shows the pod being
// deleted or gone, or when a delete request surely failed. Observing the same UID again
// (the final delete event after the deletionTimestamp update, or a failed
// delete request followed by the event) or a UID that was never expected
// does nothing and returns false. It does not change the record's time.
func (e *Expectations[K]) DeletionObserved(key K, uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.records[key]
	if !ok {
		return false
	}
	if _, ok := r.uids[uid]; !ok {
		return false
	}
	delete(r.uids, uid)
	if len(r.uids) == 0 {
		r.uids = nil // drop the table: it may have held 100,000 entries
	}
	return true
}

// PendingDeletionUIDs returns a copy of the UIDs whose deletion key still waits
// for, which the caller may change; it is empty, not nil,
// when there is none. A caller that lists the pods can observe those no longer
// listed: their delete event was lost, and a relist found them gone. It costs O(n)
// in the outstanding UIDs; Get tells their number without a copy.
func (e *Expectations[K]) PendingDeletionUIDs(key K) sets.Set[types.UID] {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := sets.New[types.UID]()
	if r, ok := e.records[key]; ok {
		for uid := range r.uids {
			out.Insert(uid)
		}
	}
	return out
}

// Satisfied reports whether key waits for nothing: it has no record, all its
// creations and deletions have been observed, or its record was last set or
// raised more than TTL ago. A controller syncs a key only when it is
// satisfied. An expired record is kept (Get shows it) until it is replaced,
// raised or deleted.
func (e *Expectations[K]) Satisfied(key K) bool {
	e.mu.Lock()
	r, ok := e.records[key]
	if !ok || r.fulfilled() {
		e.mu.Unlock()
		return true
	}
	setAt := r.setAt
	e.mu.Unlock()
	return e.expired(setAt, e.now())
}

// Delete forgets the record of key. Call it when the object behind key is
// deleted, so that a new object with the same key starts clean and the
// record does not leak.
func (e *Expectations[K]) Delete(key K) {
	e.mu.Lock()
	delete(e.records, key)
	e.mu.Unlock()
}

// Len returns the number of keys that have a record, expired ones included.
func (e *Expectations[K]) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.records)
}

// State is a snapshot of one key's record, for logs and debugging.
type State struct {
	// Exists is false when the key has no record; the other fields are then
	// zero except Satisfied, which is true.
	Exists bool
	// Creations is the number of creations not observed yet.
	Creations int
	// Deletions is the number of pod deletions (UIDs) not observed yet.
	Deletions int
	// SetAt is when the record was last replaced or raised.
	SetAt time.Time
	// Expired is true when SetAt is more than TTL before the time of Get.
	Expired bool
	// Satisfied is what Satisfied would have returned at the time of Get.
	Satisfied bool
}

// Get returns a snapshot of the record of key.
func (e *Expectations[K]) Get(key K) State {
	e.mu.Lock()
	r, ok := e.records[key]
	if !ok {
		e.mu.Unlock()
		return State{Satisfied: true}
	}
	s := State{Exists: true, Creations: r.adds, Deletions: len(r.uids), SetAt: r.setAt}
	fulfilled := r.fulfilled()
	e.mu.Unlock()
	s.Expired = e.expired(s.SetAt, e.now())
	s.Satisfied = fulfilled || s.Expired
	return s
}
