package deadlines

import (
	"errors"
	"fmt"
	"time"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateTimeouts returns an error for each negative timeout of t, as
// [plaindl.Timeouts.Validate] finds them, as Kubernetes field errors naming the field
// under fldPath (nil means no prefix, e.g. "unscheduled").
func ValidateTimeouts(t plaindl.Timeouts, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, e := range t.Validate() {
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

// podOf returns the facts of pod that the timeouts read: its phase,
// metadata.creationTimestamp and status.startTime (a zero startTime counts as
// unset). pod must not be nil.
func podOf(pod *corev1.Pod) plaindl.Pod {
	p := plaindl.Pod{Phase: plaindl.Phase(pod.Status.Phase), Created: pod.CreationTimestamp.Time}
	if pod.Status.StartTime != nil {
		p.Started = pod.Status.StartTime.Time
	}
	return p
}

// Check reports which timeout applies to pod at now, and whether it expired:
// [plaindl.Check] of the pod's phase, metadata.creationTimestamp and
// status.startTime (a zero startTime counts as unset).
//
//   - phase Pending (or empty, the API default) without status.startTime:
//     Unscheduled, measured from metadata.creationTimestamp;
//   - phase Pending with status.startTime: Pending, measured from startTime;
//   - phase Running with status.startTime: Running, measured from startTime;
//   - anything else, or a timeout of 0: plaindl.KindNone.
//
// "Running" is the pod phase, as in plank: a pod whose containers are still
// being pulled or started is Pending, even after its start time.
//
// Check does not look at deletionTimestamp; what a deleted pod means is the
// caller's business (see package podoutcome).
//
// Errors (with a zero Result), all matching plaindl.ErrInvalidInput: a nil pod; a
// negative timeout, naming the field; an Unscheduled timeout that applies to a
// pod without a creationTimestamp.
//
// Check is O(1), does not allocate on success, and does not modify pod.
func Check(pod *corev1.Pod, t plaindl.Timeouts, now time.Time) (plaindl.Result, error) {
	if pod == nil {
		return plaindl.Result{}, fmt.Errorf("deadlines.Check: %w: pod is nil", plaindl.ErrInvalidInput)
	}
	// The plain check first: it allocates nothing when the timeouts are valid.
	if t.Validate() != nil {
		return plaindl.Result{}, fmt.Errorf("deadlines.Check: %w: %w", plaindl.ErrInvalidInput, ValidateTimeouts(t, field.NewPath("timeouts")).ToAggregate())
	}
	r, err := plaindl.Check(podOf(pod), t, now)
	if err != nil {
		// The timeouts are valid, so the one error left is a missing creation time.
		var fe *plaindl.FieldError
		if errors.As(err, &fe) && fe.Field == "Created" {
			err = field.Required(field.NewPath("metadata", "creationTimestamp"), fe.Reason)
		}
		return plaindl.Result{}, fmt.Errorf("deadlines.Check: %w: %w", plaindl.ErrInvalidInput, err)
	}
	return r, nil
}
