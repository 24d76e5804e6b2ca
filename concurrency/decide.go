package concurrency

import (
	"time"

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

// Peer is one job that shares the limits with the candidate: [plainconc.Peer]
// with the job's Kubernetes UID.
type Peer struct {
	// UID identifies the job. It excludes the candidate from its own counts
	// and breaks ties between jobs created at the same instant.
	UID types.UID
	// JobName is what the per-job-name limit groups by (plank's spec.job).
	JobName string
	// Queue is the job's queue, or "" when it names none.
	Queue string
	// State is the job's state; a value other than the three constants is
	// rejected by Decide.
	State State
	// Created is the job's creation time; earlier triggered jobs go first.
	Created time.Time
}

// Plain returns p as a peer of the plain package.
func (p Peer) Plain() plainconc.Peer {
	return plainconc.Peer{UID: string(p.UID), JobName: p.JobName, Queue: p.Queue, State: p.State, Created: p.Created}
}

// Candidate is the job that asks whether it may start now.
type Candidate struct {
	// Peer describes the candidate. Its State is not read.
	Peer
	// MaxConcurrency caps how many jobs named JobName may run at once,
	// counting the candidate: 0 means no cap, negative is rejected.
	MaxConcurrency int
}

// stackPeers is the number of peers Decide converts without allocating.
const stackPeers = 32

// Decide reports whether the candidate may start now, given its peers (in any
// order; the candidate may be among them) and the limits: [plainconc.Decide] on
// the peers with their UIDs as strings. Its documentation lists the checks, the
// tie-break and the errors.
func Decide(c Candidate, peers []Peer, limits Limits) (Decision, error) {
	// Small peer lists are copied on the stack: plainconc.Decide retains nothing.
	var buf [stackPeers]plainconc.Peer
	plain := buf[:0]
	if len(peers) > stackPeers {
		plain = make([]plainconc.Peer, 0, len(peers))
	}
	for i := range peers {
		plain = append(plain, peers[i].Plain())
	}
	return plainconc.Decide(plainconc.Candidate{Peer: c.Plain(), MaxConcurrency: c.MaxConcurrency}, plain, limits)
}
