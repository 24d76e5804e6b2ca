package deadlines

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Plank's default timeouts, which DefaultTimeouts returns.
const (
	// defaultUnscheduled is plank's pod_unscheduled_timeout.
	defaultUnscheduled = 5 * time.Minute
	// defaultPending is plank's pod_pending_timeout.
	defaultPending = 10 * time.Minute
	// defaultRunning is plank's pod_running_timeout.
	defaultRunning = 48 * time.Hour
)

// The reasons Check reports for an expired timeout: the descriptions plank
// writes on the job. [Kind.Reason] gives them.
const (
	// reasonUnscheduled is the reason of an expired Unscheduled timeout.
	reasonUnscheduled = "Pod scheduling timeout."
	// reasonPending is the reason of an expired Pending timeout.
	reasonPending = "Pod pending timeout."
	// reasonRunning is the reason of an expired Running timeout.
	reasonRunning = "Pod running timeout."
)

// ErrInvalidInput is matched (errors.Is) by every error this package returns.
var ErrInvalidInput = errors.New("invalid input")

// FieldError is one rejected input field. It matches [ErrInvalidInput]. It is the
// input error of this package and of packages singlepod/podoutcome and
// singlepod/runplan (singlepod/deadlines reports field errors of apimachinery,
// also matching ErrInvalidInput).
type FieldError struct {
	// Package is the package that rejected the field, the first word of the
	// error text ("podoutcome", "runplan"); empty means "deadlines".
	Package string
	// Field names the field: "unscheduled", "pending", "running" (of
	// [Timeouts]), "Created" (of [Pod]), or a field of the package's input, e.g.
	// "Options.MaxRevivals" or "Run.Queue".
	Field string
	// Value is the rejected value as text.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *FieldError) Error() string {
	pkg := e.Package
	if pkg == "" {
		pkg = "deadlines"
	}
	return pkg + ": " + e.Field + "=" + e.Value + ": " + e.Reason
}

// Unwrap returns ErrInvalidInput.
func (e *FieldError) Unwrap() error { return ErrInvalidInput }

// Timeouts bounds how long a pod may stay in each stage of its life. A zero
// field means no timeout for that stage, so the zero value bounds nothing;
// DefaultTimeouts returns plank's values. Negative fields are invalid.
type Timeouts struct {
	// Unscheduled bounds the time from the pod's creation until it is accepted
	// by a node (Pod.Started is set), normally spent waiting for a scheduler.
	Unscheduled time.Duration
	// Pending bounds the time from Pod.Started while the pod is still in phase
	// Pending: pulling images, running init containers, starting.
	Pending time.Duration
	// Running bounds the time from Pod.Started while the pod is in phase
	// Running. It is measured from the start, not from when the phase became
	// Running, so it bounds the pod's whole time on the node.
	Running time.Duration
}

// DefaultTimeouts returns plank's defaults: 5m unscheduled, 10m pending, 48h
// running.
func DefaultTimeouts() Timeouts {
	return Timeouts{Unscheduled: defaultUnscheduled, Pending: defaultPending, Running: defaultRunning}
}

// Validate returns a *FieldError for each negative timeout, in the order
// unscheduled, pending, running; nil when all are valid.
func (t Timeouts) Validate() []*FieldError {
	if t.Unscheduled >= 0 && t.Pending >= 0 && t.Running >= 0 {
		return nil
	}
	var errs []*FieldError
	for _, f := range [...]struct {
		name string
		d    time.Duration
	}{{"unscheduled", t.Unscheduled}, {"pending", t.Pending}, {"running", t.Running}} {
		if f.d < 0 {
			errs = append(errs, &FieldError{Field: f.name, Value: f.d.String(), Reason: "must not be negative (0 means no timeout)"})
		}
	}
	return errs
}

// Phase is the phase of a pod, as far as the timeouts care.
type Phase string

// The phases that have a timeout; any other phase (finished, unknown) has none.
const (
	// PhasePending is a pod not yet running; the empty Phase means the same.
	PhasePending Phase = "Pending"
	// PhaseRunning is a pod whose containers run.
	PhaseRunning Phase = "Running"
)

// Pod is what Check reads of a pod (or of any run of a task).
type Pod struct {
	// Phase is the pod's phase; "" counts as PhasePending.
	Phase Phase
	// Created is when the pod was created; needed only while the Unscheduled
	// timeout applies.
	Created time.Time
	// Started is when a node accepted the pod; the zero time means not yet.
	Started time.Time
}

// Kind names the timeout that applies to a pod.
type Kind string

// The kinds of timeout.
const (
	// KindNone means no timeout applies: the pod is finished or in an unknown
	// phase, is Running without a start time, or the timeout of its stage is 0.
	KindNone Kind = ""
	// KindUnscheduled is Timeouts.Unscheduled: phase Pending, not started.
	KindUnscheduled Kind = "Unscheduled"
	// KindPending is Timeouts.Pending: phase Pending, started.
	KindPending Kind = "Pending"
	// KindRunning is Timeouts.Running: phase Running, started.
	KindRunning Kind = "Running"
)

// Reason returns the reason reported when a timeout of this kind expires, or
// "" for KindNone: "Pod scheduling timeout.", "Pod pending timeout." and "Pod
// running timeout.", the descriptions plank writes on the job.
func (k Kind) Reason() string {
	switch k {
	case KindUnscheduled:
		return reasonUnscheduled
	case KindPending:
		return reasonPending
	case KindRunning:
		return reasonRunning
	}
	return ""
}

// Result is the state of the one timeout that applies to a pod.
type Result struct {
	// Kind is the timeout that applies, or KindNone.
	Kind Kind
	// Expired reports whether the timeout has passed (elapsed >= timeout).
	Expired bool
	// Reason is Kind.Reason() when Expired, else "".
	Reason string
	// Timeout is the applicable timeout; 0 with KindNone.
	Timeout time.Duration
	// Elapsed is the time spent in the stage so far, never negative.
	Elapsed time.Duration
	// Remaining is how long until the timeout expires: a controller requeues
	// after it to act exactly on time. It is 0 when Expired or KindNone, and
	// never more than Timeout.
	Remaining time.Duration
}

// Check reports which timeout applies to pod at now, and whether it expired:
//
//   - phase Pending (or empty) and not started: Unscheduled, measured from
//     Created;
//   - phase Pending and started: Pending, measured from Started;
//   - phase Running and started: Running, measured from Started;
//   - anything else, or a timeout of 0: KindNone.
//
// Errors (with a zero Result), all matching ErrInvalidInput: one *FieldError per
// negative timeout (every one is reported), or one for an Unscheduled timeout that
// applies to a pod whose Created is zero. The error unwraps (Unwrap() []error) to
// the *FieldErrors; errors.As finds the first.
//
// Check is O(1) and does not allocate unless it returns an error.
func Check(pod Pod, t Timeouts, now time.Time) (Result, error) {
	if errs := t.Validate(); errs != nil {
		return Result{}, checkError(errs)
	}
	started := !pod.Started.IsZero()
	switch pod.Phase {
	case PhasePending, "":
		if !started {
			if t.Unscheduled > 0 && pod.Created.IsZero() {
				return Result{}, checkError([]*FieldError{{Field: "Created", Value: "0001-01-01T00:00:00Z",
					Reason: "needed to measure the unscheduled timeout"}})
			}
			return Measure(KindUnscheduled, pod.Created, t.Unscheduled, now), nil
		}
		return Measure(KindPending, pod.Started, t.Pending, now), nil
	case PhaseRunning:
		if started {
			return Measure(KindRunning, pod.Started, t.Running, now), nil
		}
	}
	return Result{}, nil
}

// checkError is the error of [Check]: the fields it rejected, at least one. It
// unwraps to each *FieldError, so it matches [ErrInvalidInput] and errors.As
// finds the first.
type checkError []*FieldError

func (e checkError) Error() string {
	var b strings.Builder
	b.WriteString("deadlines.Check: ")
	for i, f := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s=%s: %s", f.Field, f.Value, f.Reason)
	}
	return b.String()
}

// Unwrap returns the rejected fields, each matching ErrInvalidInput.
func (e checkError) Unwrap() []error {
	errs := make([]error, len(e))
	for i, f := range e {
		errs[i] = f
	}
	return errs
}

// Measure is the arithmetic of Check for one stage: the timeout of kind,
// started at since, as seen at now. A timeout <= 0 or KindNone gives the zero
// Result (no timeout). A since later than now (a node clock ahead of the
// controller's) counts as no time elapsed, so Remaining never exceeds timeout.
// The timeout expires when now - since >= timeout.
func Measure(kind Kind, since time.Time, timeout time.Duration, now time.Time) Result {
	if kind == KindNone || timeout <= 0 {
		return Result{}
	}
	r := Result{Kind: kind, Timeout: timeout, Elapsed: max(now.Sub(since), 0)}
	if r.Elapsed >= timeout {
		r.Expired = true
		r.Reason = kind.Reason()
		return r
	}
	r.Remaining = timeout - r.Elapsed
	return r
}
