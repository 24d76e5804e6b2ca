package deadlines

import (
	"errors"
	"fmt"
	"time"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Plank's default timeouts, which DefaultTimeouts returns.
const (
	// DefaultUnscheduled is plank's pod_unscheduled_timeout.
	DefaultUnscheduled = plaindl.DefaultUnscheduled
	// DefaultPending is plank's pod_pending_timeout.
	DefaultPending = plaindl.DefaultPending
	// DefaultRunning is plank's pod_running_timeout.
	DefaultRunning = plaindl.DefaultRunning
)

// The reasons Check reports for an expired timeout: the descriptions plank
// writes on the job.
const (
	// ReasonUnscheduled is the reason of an expired Unscheduled timeout.
	ReasonUnscheduled = plaindl.ReasonUnscheduled
	// ReasonPending is the reason of an expired Pending timeout.
	ReasonPending = plaindl.ReasonPending
	// ReasonRunning is the reason of an expired Running timeout.
	ReasonRunning = plaindl.ReasonRunning
)

// ErrInvalidInput is matched (errors.Is) by every error this package returns.
var ErrInvalidInput = plaindl.ErrInvalidInput

// Timeouts bounds how long a pod may stay in each stage of its life: the fields
// of [plaindl.Timeouts], with a Validate that reports Kubernetes field errors. A
// zero field means no timeout for that stage; negative fields are invalid. The
// stages start at metadata.creationTimestamp (Unscheduled) and at
// status.startTime (Pending, Running).
type Timeouts plaindl.Timeouts

// DefaultTimeouts returns plank's defaults: 5m unscheduled, 10m pending, 48h
// running.
func DefaultTimeouts() Timeouts {
	return Timeouts(plaindl.DefaultTimeouts())
}

// Validate returns an error for each negative timeout, naming the field under
// fldPath (nil means no prefix, e.g. "unscheduled").
func (t Timeouts) Validate(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, e := range plaindl.Timeouts(t).Validate() {
		errs = append(errs, field.Invalid(child(fldPath, e.Field), e.Value, e.Reason))
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
type Kind = plaindl.Kind

// The kinds of timeout.
const (
	// KindNone means no timeout applies: the pod is finished or in phase
	// Unknown, is Running without a start time, or the timeout of its stage
	// is 0.
	KindNone = plaindl.KindNone
	// KindUnscheduled is Timeouts.Unscheduled: phase Pending, no startTime.
	KindUnscheduled = plaindl.KindUnscheduled
	// KindPending is Timeouts.Pending: phase Pending with a startTime.
	KindPending = plaindl.KindPending
	// KindRunning is Timeouts.Running: phase Running with a startTime.
	KindRunning = plaindl.KindRunning
)

// Result is the state of the one timeout that applies to a pod.
type Result = plaindl.Result

// PodOf returns the facts of pod that the timeouts read: its phase,
// metadata.creationTimestamp and status.startTime (a zero startTime counts as
// unset). pod must not be nil.
func PodOf(pod *corev1.Pod) plaindl.Pod {
	p := plaindl.Pod{Phase: plaindl.Phase(pod.Status.Phase), Created: pod.CreationTimestamp.Time}
	if pod.Status.StartTime != nil {
		p.Started = pod.Status.StartTime.Time
	}
	return p
}

// Check reports which timeout applies to pod at now, and whether it expired:
// [plaindl.Check] of [PodOf](pod).
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
	// The plain check first: it allocates nothing when the timeouts are valid.
	if plaindl.Timeouts(t).Validate() != nil {
		return Result{}, fmt.Errorf("deadlines.Check: %w: %w", ErrInvalidInput, t.Validate(field.NewPath("timeouts")).ToAggregate())
	}
	r, err := plaindl.Check(PodOf(pod), plaindl.Timeouts(t), now)
	if err != nil {
		// The timeouts are valid, so the one error left is a missing creation time.
		var fe *plaindl.FieldError
		if errors.As(err, &fe) && fe.Field == "Created" {
			err = field.Required(field.NewPath("metadata", "creationTimestamp"), fe.Reason)
		}
		return Result{}, fmt.Errorf("deadlines.Check: %w: %w", ErrInvalidInput, err)
	}
	return r, nil
}

// Measure is the arithmetic of Check without a pod: [plaindl.Measure].
func Measure(kind Kind, since time.Time, timeout time.Duration, now time.Time) Result {
	return plaindl.Measure(kind, since, timeout, now)
}
