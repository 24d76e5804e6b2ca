package sim

import "fmt"

// Invariant names a checked property.
type Invariant string

// The invariants; the package documentation states each.
const (
	// InvCount: the counters, completedIndexes and failedIndexes follow the model.
	InvCount Invariant = "count"
	// InvCountedTwice: a UID entered an uncounted list after it was counted.
	InvCountedTwice Invariant = "counted-twice"
	// InvRecordFirst: a pod lost its finalizer before it was recorded, or was
	// counted before it lost its finalizer.
	InvRecordFirst Invariant = "record-first"
	// InvBackwards: a counter or an index list went back.
	InvBackwards Invariant = "backwards"
	// InvInvalidStatus: the API server refused a status write.
	InvInvalidStatus Invariant = "invalid-status"
	// InvSucceededIndexCreated: a pod was created for a completed index.
	InvSucceededIndexCreated Invariant = "succeeded-index-created"
	// InvDuplicateIndex: an index had two active pods long after any fault.
	InvDuplicateIndex Invariant = "duplicate-index"
	// InvOverParallelism: more active pods than parallelism long after any fault.
	InvOverParallelism Invariant = "over-parallelism"
	// InvNotFinished: the Job had no terminal condition at the end.
	InvNotFinished Invariant = "not-finished"
	// InvFinalizerLeft: a pod still carried the tracking finalizer at the end.
	InvFinalizerLeft Invariant = "finalizer-left"
	// InvUncountedLeft: the finished Job still had uncounted pods.
	InvUncountedLeft Invariant = "uncounted-left"
	// InvWrongOwner: a pod created for the owner has a controller reference to
	// another kind, or carries the tracking finalizer of another kind.
	InvWrongOwner Invariant = "wrong-owner"
	// InvAdoption: an adopted pod lacks the tracking finalizer, does not match the
	// selector, or was adopted by an owner already deleted.
	InvAdoption Invariant = "adoption"
	// InvReleased: a released pod kept the tracking finalizer, or entered an
	// uncounted list after its release.
	InvReleased Invariant = "released"
	// InvCreatedAfterDelete: a pod was created for the owner after its deletion,
	// other than by a sync whose cache still showed the owner.
	InvCreatedAfterDelete Invariant = "created-after-delete"
	// InvTwoLivePods: a pod was created for an index that held a live pod of the
	// owner.
	InvTwoLivePods Invariant = "two-live-pods"
	// InvLateReplacement: the API server refused the creation of a pod for an
	// index with AlreadyExists in lateSyncs syncs while the index held no live pod
	// of the owner: the name is another's (a released or foreign pod) and the
	// replacement does not come.
	InvLateReplacement Invariant = "late-replacement"
)

// lateSyncs is how many syncs may refuse an index's creation with AlreadyExists
// before InvLateReplacement breaks: the sync that learns whose pod holds the name
// takes the next name in that sync or the next one.
const lateSyncs = 3

// Violation is a broken invariant.
type Violation struct {
	Invariant Invariant
	// Action is the position in the trace of the action during or after which the
	// violation was found; Sync counts the syncs run until then.
	Action, Sync int
	Message      string
}

// String renders the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s (action %d, sync %d): %s", v.Invariant, v.Action, v.Sync, v.Message)
}

// cleanSyncs is how many syncs that see everything the controller wrote may pass
// after a fault that hid its writes before duplicates and excess pods must be gone.
const cleanSyncs = 3
