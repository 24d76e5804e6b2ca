package concurrency

import (
	"fmt"
	"time"
)

// DefaultRetryAfter is how long a blocked job waits before it asks again when
// Limits.RetryAfter is zero. Plank requeues blocked jobs after the same 10s.
const DefaultRetryAfter = 10 * time.Second

// State is where a job is in its life, as far as the limits care.
type State string

// The states a Peer can be in. A controller maps its own states onto these:
// anything that has finished, failed, errored or been aborted is StateFinished.
const (
	// StateTriggered is a job that wants to start and has no pod yet.
	StateTriggered State = "triggered"
	// StatePending is a job that started: its pod was created and it has not
	// finished. Plank calls this state pending whatever the pod's phase is.
	StatePending State = "pending"
	// StateFinished is a job that no longer holds or waits for a slot.
	StateFinished State = "finished"
)

// Peer is one job that shares the limits with the candidate, described by
// plain data so that any custom resource (or none) can be mapped onto it. ID is
// the type of its UID: string for a scheduler (Peer[string]), types.UID for a
// Kubernetes controller (Peer[types.UID], as package singlepod/runplan uses it),
// so that its peers are used as they are, without a copy.
type Peer[ID ~string] struct {
	// UID identifies the job. It excludes the candidate from its own counts
	// and breaks ties between jobs created at the same instant.
	UID ID
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

// Candidate is the job that asks whether it may start now.
type Candidate[ID ~string] struct {
	// Peer describes the candidate. Its State is not read: the question is
	// asked on behalf of a triggered job, but a controller may ask again for
	// a job it already moved on.
	Peer[ID]
	// MaxConcurrency caps how many jobs named JobName may run at once,
	// counting the candidate: 0 means no cap, negative is rejected.
	MaxConcurrency int
}

// Limits are the limits shared by all jobs. The zero value limits nothing and
// knows no queue.
type Limits struct {
	// MaxPending caps the number of pending jobs of any name: 0 means no cap,
	// negative is rejected.
	MaxPending int
	// Queues maps a queue name to its capacity: how many of its jobs may run
	// at once. 0 means its jobs never start; negative means unlimited. A
	// candidate that names a queue missing from this map is an error.
	Queues map[string]int
	// RetryAfter is how long a blocked job waits before asking again: 0 means
	// DefaultRetryAfter, negative is rejected.
	RetryAfter time.Duration
}

// Limit names the limit that blocked a job.
type Limit string

// The limits Decide checks, in the order it checks them.
const (
	// LimitNone is the BlockedBy of a job that may start.
	LimitNone Limit = ""
	// LimitMaxPending is Limits.MaxPending, the global cap on pending jobs.
	LimitMaxPending Limit = "MaxPending"
	// LimitMaxConcurrency is Candidate.MaxConcurrency, the per-job-name cap.
	LimitMaxConcurrency Limit = "MaxConcurrency"
	// LimitQueue is the capacity of the candidate's queue in Limits.Queues.
	LimitQueue Limit = "Queue"
)

// Counts are the numbers Decide compared with the limits. The candidate is
// never counted (a peer with the candidate's UID is skipped).
type Counts struct {
	// Pending is the number of pending peers of any name.
	Pending int
	// SameName is the number of peers named like the candidate that are
	// pending, or triggered and ahead of the candidate.
	SameName int
	// SameQueue is the number of peers in the candidate's queue that are
	// pending, or triggered and ahead of the candidate; 0 when the candidate
	// names no queue.
	SameQueue int
}

// Decision is the answer of Decide.
type Decision struct {
	// Allowed reports whether the candidate may start now.
	Allowed bool
	// BlockedBy is the first limit that held the candidate back, or LimitNone.
	BlockedBy Limit
	// Counts are all three counts, whichever limit blocked.
	Counts Counts
	// Limit is the value of the limit that blocked (the count it was compared
	// with is in Counts); 0 when allowed.
	Limit int
	// Message says in words why the candidate may or may not start.
	Message string
	// RetryAfter is how long to wait before asking again; 0 when allowed.
	RetryAfter time.Duration
}

const allowedMessage = "within all limits"

// Decide reports whether the candidate may start now, given its peers (the
// other jobs sharing the limits, in any order; the candidate may be among
// them) and the limits. The checks, in order, the first to block wins:
//
//  1. limits.MaxPending > 0: blocked if at least MaxPending peers are pending
//     (triggered peers do not count);
//  2. c.MaxConcurrency > 0: blocked if at least MaxConcurrency peers with the
//     candidate's JobName are ahead of it;
//  3. c.Queue != "": blocked if the queue's capacity is 0, or if it is positive
//     and at least that many peers in the queue are ahead of the candidate,
//     whatever their name.
//
// A peer is ahead of the candidate when it is pending, or when it is
// triggered and was created earlier; at equal creation times the lower UID is
// earlier. So triggered jobs start in creation order without a global lock:
// each one waits for the earlier ones, which see no such wait themselves.
//
// Bad input gives the zero Decision and an *InputError: an empty
// candidate UID, a negative MaxConcurrency, MaxPending or RetryAfter, an
// empty JobName with a positive MaxConcurrency, a peer whose State is not one
// of the three constants, or a queue missing from limits.Queues (that error
// also matches ErrUnknownQueue). Inputs are validated before any limit is
// applied, so an unknown queue is reported even when another limit blocks.
//
// Decide reads each peer once: O(len(peers)) time, no allocation when the
// candidate may start; when it is blocked, only the message allocates.
func Decide[ID ~string](c Candidate[ID], peers []Peer[ID], limits Limits) (Decision, error) {
	capacity, err := validate(c, limits)
	if err != nil {
		return Decision{}, err
	}
	var n Counts
	for i := range peers {
		p := &peers[i]
		switch p.State {
		case StatePending, StateTriggered, StateFinished:
		default:
			return Decision{}, &InputError{Field: fmt.Sprintf("peers[%d].State", i), Value: fmt.Sprintf("%q", p.State),
				Reason: fmt.Sprintf("must be %q, %q or %q", StateTriggered, StatePending, StateFinished)}
		}
		if p.UID == c.UID {
			continue
		}
		if p.State == StatePending {
			n.Pending++
		}
		sameName := p.JobName == c.JobName
		sameQueue := c.Queue != "" && p.Queue == c.Queue
		if (!sameName && !sameQueue) || !ahead(p, &c.Peer) {
			continue
		}
		if sameName {
			n.SameName++
		}
		if sameQueue {
			n.SameQueue++
		}
	}

	d := Decision{Counts: n}
	switch {
	case limits.MaxPending > 0 && n.Pending >= limits.MaxPending:
		d.BlockedBy, d.Limit = LimitMaxPending, limits.MaxPending
		d.Message = fmt.Sprintf("%d jobs are pending, at most %d may be", n.Pending, limits.MaxPending)
	case c.MaxConcurrency > 0 && n.SameName >= c.MaxConcurrency:
		d.BlockedBy, d.Limit = LimitMaxConcurrency, c.MaxConcurrency
		d.Message = fmt.Sprintf("%d jobs named %q are pending or were triggered earlier, at most %d may run at once",
			n.SameName, c.JobName, c.MaxConcurrency)
	case c.Queue != "" && capacity == 0:
		d.BlockedBy, d.Limit = LimitQueue, 0
		d.Message = fmt.Sprintf("queue %q has capacity 0: its jobs never start", c.Queue)
	case c.Queue != "" && capacity > 0 && n.SameQueue >= capacity:
		d.BlockedBy, d.Limit = LimitQueue, capacity
		d.Message = fmt.Sprintf("%d jobs in queue %q are pending or were triggered earlier, its capacity is %d",
			n.SameQueue, c.Queue, capacity)
	default:
		d.Allowed = true
		d.Message = allowedMessage
		return d, nil
	}
	d.RetryAfter = limits.RetryAfter
	if d.RetryAfter == 0 {
		d.RetryAfter = DefaultRetryAfter
	}
	return d, nil
}

// validate checks everything but the peers and returns the capacity of the
// candidate's queue (meaningless when it names none).
func validate[ID ~string](c Candidate[ID], l Limits) (int, error) {
	if c.UID == "" {
		return 0, &InputError{Field: "Candidate.UID", Value: `""`, Reason: "required to tell the candidate from its peers"}
	}
	if c.MaxConcurrency < 0 {
		return 0, &InputError{Field: "Candidate.MaxConcurrency", Value: fmt.Sprint(c.MaxConcurrency), Reason: "must not be negative"}
	}
	if c.MaxConcurrency > 0 && c.JobName == "" {
		return 0, &InputError{Field: "Candidate.JobName", Value: `""`, Reason: "required when MaxConcurrency is set"}
	}
	if l.MaxPending < 0 {
		return 0, &InputError{Field: "Limits.MaxPending", Value: fmt.Sprint(l.MaxPending), Reason: "must not be negative"}
	}
	if l.RetryAfter < 0 {
		return 0, &InputError{Field: "Limits.RetryAfter", Value: l.RetryAfter.String(), Reason: "must not be negative"}
	}
	if c.Queue == "" {
		return 0, nil
	}
	capacity, ok := l.Queues[c.Queue]
	if !ok {
		return 0, &InputError{Field: "Candidate.Queue", Value: fmt.Sprintf("%q", c.Queue),
			Reason: "not configured in Limits.Queues", Err: ErrUnknownQueue}
	}
	return capacity, nil
}

// ahead reports whether peer p takes a slot before candidate c: p is pending,
// or p is triggered and earlier than c (creation time, then UID).
func ahead[ID ~string](p, c *Peer[ID]) bool {
	switch p.State {
	case StatePending:
		return true
	case StateTriggered:
		if p.Created.Equal(c.Created) {
			return p.UID < c.UID
		}
		return p.Created.Before(c.Created)
	}
	return false
}
