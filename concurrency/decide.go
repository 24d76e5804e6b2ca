package concurrency

import (
	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultRetryAfter is how long a blocked job waits before it asks again when
// Limits.RetryAfter is zero.
const DefaultRetryAfter = plainconc.DefaultRetryAfter

// State is where a job is in its life, as far as the limits care.
type State = plainconc.State

// The states a Peer can be in; see the plain package.
const (
	// StateTriggered is a job that wants to start and has no pod yet.
	StateTriggered = plainconc.StateTriggered
	// StatePending is a job that started and has not finished.
	StatePending = plainconc.StatePending
	// StateFinished is a job that no longer holds or waits for a slot.
	StateFinished = plainconc.StateFinished
)

// Limits are the limits shared by all jobs; the zero value limits nothing.
type Limits = plainconc.Limits

// Limit names the limit that blocked a job.
type Limit = plainconc.Limit

// The limits Decide checks, in the order it checks them.
const (
	// LimitNone is the BlockedBy of a job that may start.
	LimitNone = plainconc.LimitNone
	// LimitMaxPending is Limits.MaxPending, the global cap on pending jobs.
	LimitMaxPending = plainconc.LimitMaxPending
	// LimitMaxConcurrency is Candidate.MaxConcurrency, the per-job-name cap.
	LimitMaxConcurrency = plainconc.LimitMaxConcurrency
	// LimitQueue is the capacity of the candidate's queue in Limits.Queues.
	LimitQueue = plainconc.LimitQueue
)

// Counts are the numbers Decide compared with the limits.
type Counts = plainconc.Counts

// Decision is the answer of Decide.
type Decision = plainconc.Decision

// InputError reports an argument that was rejected.
type InputError = plainconc.InputError

// KeyedMutex is a set of try-locks, one per key; see the plain package.
type KeyedMutex[K comparable] = plainconc.KeyedMutex[K]

// ErrInvalidInput is matched (errors.Is) by every error Decide returns.
var ErrInvalidInput = plainconc.ErrInvalidInput

// ErrUnknownQueue is matched by the error Decide returns for a candidate whose
// queue is missing from Limits.Queues. It also matches ErrInvalidInput.
var ErrUnknownQueue = plainconc.ErrUnknownQueue

// Peer is one job that shares the limits with the candidate, identified by its
// Kubernetes UID: [plainconc.Peer] with types.UID.
type Peer = plainconc.Peer[types.UID]

// Candidate is the job that asks whether it may start now: [plainconc.Candidate]
// with types.UID. Its State is not read; MaxConcurrency caps how many jobs named
// JobName may run at once, counting the candidate (0 means no cap).
type Candidate = plainconc.Candidate[types.UID]

// Decide reports whether the candidate may start now, given its peers (in any
// order; the candidate may be among them) and the limits: [plainconc.Decide] with
// Kubernetes UIDs, which reads the peers as they are. Its documentation lists the
// checks, the tie-break and the errors.
func Decide(c Candidate, peers []Peer, limits Limits) (Decision, error) {
	return plainconc.Decide(c, peers, limits)
}
