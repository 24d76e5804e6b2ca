package deadlines

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Plank's default timeouts, which DefaultTimeouts returns.
const (
	// DefaultUnscheduled is plank's pod_unscheduled_timeout.
	DefaultUnscheduled = 5 * time.Minute
	// DefaultPending is plank's pod_pending_timeout.
	DefaultPending = 10 * time.Minute
	// DefaultRunning is plank's pod_running_timeout.
	DefaultRunning = 48 * time.Hour
)

// The reasons Check reports for an expired timeout: the descriptions plank
// writes on the job.
const (
	// ReasonUnscheduled is the reason of an expired Unscheduled timeout.
	ReasonUnscheduled = "Pod scheduling timeout."
	// ReasonPending is the reason of an expired Pending timeout.
	ReasonPending = "Pod pending timeout."
	// ReasonRunning is the reason of an expired Running timeout.
	ReasonRunning = "Pod running timeout."
)

// ErrInvalidInput is matched (errors.Is) by every error this package returns.
var ErrInvalidInput = errors.New("invalid input")

// Timeouts bounds how long a pod may stay in each stage of its life. A zero
// field means no timeout for that stage, so the zero value bounds nothing;
// DefaultTimeouts returns plank's values. Negative fields are invalid.
type Timeouts struct {
	// Unscheduled bounds the time from the pod's creation until the kubelet
	// accepts it (status.startTime is set), normally spent waiting for the
	// scheduler.
	Unscheduled time.Duration
	// Pending bounds the time from status.startTime while the pod is still in
	// phase Pending: pulling images, running init containers, starting.
	Pending time.Duration
	// Running bounds the time from status.startTime while the pod is in
	// phase Running. It is measured from startTime, not from when the phase
	// became Running, so it bounds the pod's whole time on the node.
	Running time.Duration
}

// DefaultTimeouts returns plank's defaults: 5m unscheduled, 10m pending, 48h
// running.
func DefaultTimeouts() Timeouts {
	return Timeouts{Unscheduled: DefaultUnscheduled, Pending: DefaultPending, Running: DefaultRunning}
}

// Validate returns an error for each negative timeout, naming the field under
// fldPath (nil means no prefix, e.g. "unscheduled").
func (t Timeouts) Validate(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"unscheduled", t.Unscheduled}, {"pending", t.Pending}, {"running", t.Running}} {
		if f.d < 0 {
			errs = append(errs, field.Invalid(child(fldPath, f.name), f.d.String(), "must not be negative (0 means no timeout)"))
		}
	}
	return errs
}

func child(p *field.Path, name string) *field.Path {
	if p == nil {
		return field.NewPath(name)
	}
	return p.Child(name)
}

// Kind names the timeout that applies to a pod.
type Kind string

// The kinds of timeout.
const (
	// KindNone means no timeout applies: the pod is finished or in phase
	// Unknown, is Running without a start time, or the timeout of its stage
	// is 0.
	KindNone Kind = ""
	// KindUnscheduled is Timeouts.Unscheduled: phase Pending, no startTime.
	KindUnscheduled Kind = "Unscheduled"
	// KindPending is Timeouts.Pending: phase Pending with a startTime.
	KindPending Kind = "Pending"
	// KindRunning is Timeouts.Running: phase Running with a startTime.
	KindRunning Kind = "Running"
)

// Reason returns the reason reported when a timeout of this kind expires, or
// "" for KindNone.
func (k Kind) Reason() string {
	switch k {
	case KindUnscheduled:
		return ReasonUnscheduled
	case KindPending:
		return ReasonPending
	case KindRunning:
		return ReasonRunning
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
//   - phase Pending (or empty, the API default) without status.startTime:
//     Unscheduled, measured from metadata.creationTimestamp;
//   - phase Pending with status.startTime: Pending, measured from startTime;
//   - phase Running with status.startTime: Running, measured from startTime;
//   - anything else, or a timeout of 0: KindNone.
//
// "Running" is the pod phase, as in plank: a pod whose containers are still
// being pulled or started is Pending, even after its start time.
//
// Check does not look at deletionTimestamp; what a deleted pod means is the
// caller's business (see package podoutcome).
//
// Errors (with a zero Result), all matching ErrInvalidInput: a nil pod; a
// negative timeout, naming the field; an Unscheduled timeout that applies to a
// pod without a creationTimestamp.
//
// Check is O(1), does not allocate on success, and does not modify pod.
func Check(pod *corev1.Pod, t Timeouts, now time.Time) (Result, error) {
	if pod == nil {
		return Result{}, fmt.Errorf("deadlines.Check: %w: pod is nil", ErrInvalidInput)
	}
	if t.Unscheduled < 0 || t.Pending < 0 || t.Running < 0 {
		return Result{}, fmt.Errorf("deadlines.Check: %w: %w", ErrInvalidInput,
			t.Validate(field.NewPath("timeouts")).ToAggregate())
	}
	started := pod.Status.StartTime != nil && !pod.Status.StartTime.IsZero()
	switch pod.Status.Phase {
	case corev1.PodPending, "":
		if !started {
			if t.Unscheduled > 0 && pod.CreationTimestamp.IsZero() {
				return Result{}, fmt.Errorf("deadlines.Check: %w: %w", ErrInvalidInput,
					field.Required(field.NewPath("metadata", "creationTimestamp"), "needed to measure the unscheduled timeout"))
			}
			return Measure(KindUnscheduled, pod.CreationTimestamp.Time, t.Unscheduled, now), nil
		}
		return Measure(KindPending, pod.Status.StartTime.Time, t.Pending, now), nil
	case corev1.PodRunning:
		if started {
			return Measure(KindRunning, pod.Status.StartTime.Time, t.Running, now), nil
		}
	}
	return Result{}, nil
}

// Measure is the arithmetic of Check without a pod: the timeout of kind,
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
