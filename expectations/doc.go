// Package expectations remembers which pod changes a controller has asked for
// and not yet seen in its informer cache, so that it does not act twice on a
// stale cache (create a pod twice, count a finished pod twice).
//
// Two types, both generic over the key (a Job's "namespace/name" string or a
// types.NamespacedName):
//
//   - Expectations counts outstanding creations and tracks outstanding
//     deletions by pod UID, per key, with a TTL. Expect* replaces a key's
//     record; Raise* adds to it before each API call; a call that surely
//     failed, or a create never sent, is given back with CreationObserved,
//     DeletionObserved or Lower. A call whose outcome is unknown
//     (OutcomeUnknown: a timeout, a lost answer) may have been applied and is
//     NOT given back: its event, or the TTL, settles it. Satisfied tells
//     whether the key may be synced.
//   - FinalizerRemovals holds, per key, the UIDs of pods whose tracking
//     finalizer removal is in flight. It has no TTL.
//
// # Rules and invariants
//
//   - A key is satisfied when it has no record, when its creations and
//     deletions are all observed, or when the record was last set or raised
//     more than the TTL ago (strictly more: a record exactly TTL old still
//     waits). The TTL defaults to 5 minutes (the Job controller's
//     ExpectationsTimeout).
//   - The count of creations never goes below zero; observing more than was
//     expected is harmless.
//   - A UID lowers its key at most once per expectation: a second observation
//     of the same UID, or one never expected, does nothing.
//   - Observations never create a record and never change its time; only
//     Expect* and Raise* (with something to add) set the time to now.
//   - Raising an expired record starts from zero, since Satisfied already
//     treats its leftover counts as lost events.
//   - Records, expired ones included, stay until replaced or deleted: call
//     Delete when the object behind a key goes away.
//   - Bad input (a negative count, an empty UID, a negative TTL) is an
//     *InputError; the valid part of the call is kept (valid UIDs are still
//     recorded), a rejected count changes nothing.
//
// # Cost
//
// Satisfied, Get, CreationObserved, DeletionObserved, Lower, ExpectCreations,
// RaiseCreations, Delete, and FinalizerRemovals.Has, Observed, PendingCount and
// Delete are O(1) and do not allocate once a key has a record. ExpectDeletions,
// RaiseDeletions, PendingDeletionUIDs, FinalizerRemovals.Expect and
// FinalizerRemovals.Pending are O(n) in the UIDs passed or returned. Memory is one
// small record per key plus one map entry per outstanding UID; a UID table is
// released as soon as it empties.
//
// # Concurrency
//
// Both types are safe for concurrent use. Each holds one mutex for O(1)
// critical sections; the clock is read outside it, and ExpectDeletions
// builds its UID set before taking it. Only RaiseDeletions and
// FinalizerRemovals.Expect insert their UIDs under the lock.
//
// # Differences from upstream
//
// The Job controller of Kubernetes 1.37 keeps its expectations in
// ControllerExpectations (pkg/controller) and its finalizer removals in
// uidTrackingExpectations (pkg/controller/job). This package differs on purpose:
//
//   - Deletions are tracked by pod UID, never counted. Upstream's
//     ControllerExpectations counts them, and the Job controller lowers the
//     count on every pod update that carries a deletionTimestamp and again on
//     the final delete event, so one pod can lower it several times; its
//     counter then goes negative and the key looks satisfied while other
//     deletions are still in flight. With UIDs each pod counts once; a
//     controller deletes pods it has read, so it always has their UIDs.
//   - Counts stop at zero instead of going negative, so an extra observation
//     cannot absorb a later raise.
//   - The clock and the TTL are injected through Config (upstream reads the
//     real clock and has a fixed 5 minutes), so expiry is testable.
//   - Raise* creates a missing record and resets the record's time (upstream's
//     RaiseExpectations does nothing without a record and keeps the old time),
//     because this package is meant to be raised before every API call.
//   - Negative counts and empty UIDs are rejected instead of recorded.
//   - FinalizerRemovals drops a key once its last UID is observed (upstream
//     keeps an empty set); the observable behaviour is the same.
package expectations
