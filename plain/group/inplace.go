package group

import (
	"errors"
	"fmt"
	"strconv"
)

// AnnotationInPlaceRestartAttempt is the pod annotation through which a pod
// (its in-place restart agent) reports the in-place restart attempt it is on:
// a non-negative integer, JobSet's key.
const AnnotationInPlaceRestartAttempt = "jobset.sigs.k8s.io/in-place-restart-attempt"

// PodAttempt is what one pod of a group restarted in place tells the group.
type PodAttempt struct {
	// Annotation is the value of the pod's AnnotationInPlaceRestartAttempt;
	// Annotated is false when the pod has none (its agent has not started).
	Annotation string
	Annotated  bool
	// Failed is set for a pod whose phase is Failed: it reports no attempt
	// (its replacement will).
	Failed bool
	// Succeeded is set for a pod whose phase is Succeeded: its index is
	// complete and it restarts no more, so it reports no attempt and the
	// roles expect one pod fewer. (JobSet counts its attempt, and a pod that
	// succeeds while the others restart holds their barrier forever.)
	Succeeded bool
	// Leaving is set for a pod on its way out of the group's size: of a child
	// beyond its role's replicas ([Spec.Surplus]), of a completion index at or
	// above its child's new parallelism, or one that has finished in a child
	// of an earlier group restart. It reports no attempt and is not among the
	// pods the roles expect, so it never holds the barrier.
	Leaving bool
	// RestartCount is the largest restartCount among the pod's containers and
	// init containers.
	RestartCount int32
}

// Attempt returns the in-place restart attempt the pod reports: reported is
// false for a failed, succeeded or leaving pod and for a pod without the
// annotation, and err names
// the annotation and its value when that is not a non-negative integer of
// 32 bits (the pod then reports nothing).
func (p *PodAttempt) Attempt() (attempt int32, reported bool, err error) {
	if p.Failed || p.Succeeded || p.Leaving || !p.Annotated {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(p.Annotation, 10, 32)
	if perr != nil || n < 0 {
		return 0, false, fmt.Errorf("%w: annotation %s=%q: must be a non-negative integer", ErrInvalid, AnnotationInPlaceRestartAttempt, p.Annotation)
	}
	return int32(n), true, nil
}

// InPlaceAttempts are a group's in-place restart attempts, as its status holds
// them (previousInPlaceRestartAttempt, currentInPlaceRestartAttempt); nil is
// unset. An agent restarts its pod in place when the pod's attempt is at most
// Previous, and lets its worker run when the pod's attempt is Current: the
// barrier, so that no worker of one attempt talks to one of an earlier attempt.
type InPlaceAttempts struct {
	Previous, Current *int32
}

// Next decides one sync of a group restarted in place (restartStrategy
// InPlaceRestart) from its pods, as JobSet does but for succeeded and
// leaving pods (see [PodAttempt]):
//
//   - the group fails (ReachedMaxRestarts) when a container of any pod not
//     leaving has
//     restarted more than maxRestarts times (a container failing too fast for
//     the barrier ever to lift), or when the highest attempt a pod reports,
//     less the group restarts that do not count (Restarts -
//     RestartsCountTowardsMax), exceeds maxRestarts;
//   - otherwise, when as many pods report an attempt as the roles expect
//     (replicas × parallelism summed over roles, less the pods that have
//     succeeded and are not leaving) and all report the same one,
//     Current becomes that attempt: every pod has reached it, the barrier lifts;
//   - otherwise, when the highest attempt reported is above 0, Previous becomes
//     that attempt less one, so the pods still on an earlier attempt restart in
//     place to join it; Previous never goes back (a pod of the highest attempt
//     may be recreated meanwhile and report less).
//
// Failed, succeeded and leaving pods and pods without the annotation report
// nothing. The attempts returned are a, with at most one field replaced by a new pointer; the
// Decision is NoFailure or Fail (Rule and Child -1, the counters c). A pod
// whose annotation is not a non-negative integer reports nothing and is named
// in the error, which wraps ErrInvalid; the decision over the other pods is
// returned with it. O(pods); allocates 8 bytes besides the error.
func (a InPlaceAttempts) Next(roles []Role, pods []PodAttempt, maxRestarts int32, c Counters) (InPlaceAttempts, Decision, error) {
	none := Decision{Rule: -1, Child: -1, Counters: c}
	var errs []error
	var reported, done int64
	var highest, first int32
	same := true
	for i := range pods {
		p := &pods[i]
		if p.Leaving {
			continue
		}
		if p.RestartCount > maxRestarts {
			return a, inPlaceFailed(none), nil
		}
		if p.Succeeded {
			done++
			continue
		}
		n, ok, err := p.Attempt()
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %d: %w", i, err))
		}
		if !ok {
			continue
		}
		if reported == 0 {
			first = n
		}
		same = same && n == first
		highest = max(highest, n)
		reported++
	}
	err := errors.Join(errs...)
	if int64(highest)-(int64(c.Restarts)-int64(c.RestartsCountTowardsMax)) > int64(maxRestarts) {
		return a, inPlaceFailed(none), err
	}
	expected := -done
	for i := range roles {
		expected += int64(roles[i].Replicas) * int64(roles[i].Parallelism)
	}
	switch {
	case reported > 0 && reported == expected && same:
		if a.Current == nil || *a.Current != first {
			a.Current = &first
		}
	case highest > 0:
		if prev := highest - 1; a.Previous == nil || prev > *a.Previous {
			a.Previous = &prev
		}
	}
	return a, none, err
}

// inPlaceFailed is d failing the group with ReachedMaxRestarts, in JobSet's
// words.
func inPlaceFailed(d Decision) Decision {
	msg := Terms{}.reachedMaxRestarts()
	d.Effect, d.TerminalState = Fail, terminalFailed
	d.Condition = &Condition{Type: ConditionFailed, Status: True, Reason: reasonReachedMaxRestarts, Message: msg}
	d.EventReason, d.EventMessage = reasonReachedMaxRestarts, msg
	return d
}
