package podoutcome

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/deadlines"
)

// DefaultMaxRevivals is plank's default max_revivals.
const DefaultMaxRevivals = 3

// The descriptions plank writes on the job, which Step.Message carries.
const (
	// messageSucceeded is the message of ActionComplete.
	messageSucceeded = "Job succeeded."
	// messageFailed is the message of ActionFail.
	messageFailed = "Job failed."
	// messageFalseSuccess begins the message of a FalseSuccess error; the
	// container and the problem follow after ": ".
	messageFalseSuccess = "Pod was in succeeded phase but some containers didn't finish"
	// messageOOMKilled is the message of an OOMKilled error.
	messageOOMKilled = "Job pod was OOM killed by the cluster."
	// messageEvicted is the message of an Evicted error (Options.ErrorOnEviction).
	messageEvicted = "Job pod was evicted by the cluster."
	// messageDeleted is the message of a DeletedUnexpectedly error.
	messageDeleted = "Pod got deleted unexpectedly"
)

// reasonMaxRevivals is the Step reason of a pod that stopped unexpectedly once
// too often. The other reasons that are not an Outcome name the expired timeout:
// "<Kind>Timeout" (UnscheduledTimeout, PendingTimeout, RunningTimeout).
const reasonMaxRevivals = "MaxRevivals"

// Action is what the controller does next with a single-pod job. The terminal
// actions map to plank's job states as named.
type Action string

// The actions.
const (
	// ActionWait leaves the job as it is; requeue after Step.RequeueAfter
	// when it is positive, else wait for the next pod event.
	ActionWait Action = "Wait"
	// ActionComplete finishes the job as succeeded (plank: success).
	ActionComplete Action = "Complete"
	// ActionFail finishes the job as failed: the workload failed (plank: failure).
	ActionFail Action = "Fail"
	// ActionError finishes the job as errored: the infrastructure failed, not
	// the workload (plank: error).
	ActionError Action = "Error"
	// ActionAbort finishes the job as aborted (plank: aborted, used for the
	// running timeout).
	ActionAbort Action = "Abort"
	// ActionRetry replaces the pod: write Step.Revivals to the job first, then
	// delete the pod if Step.DeletePod, then create a new pod once the old one
	// is gone. The job stays pending.
	ActionRetry Action = "Retry"
)

// Terminal reports whether the action finishes the job.
func (a Action) Terminal() bool {
	switch a {
	case ActionComplete, ActionFail, ActionError, ActionAbort:
		return true
	}
	return false
}

// Revivals is the revival record a controller keeps on the job (in its status),
// so that the bound holds across controller restarts.
type Revivals struct {
	// Count is how many times the job's pod was replaced after an unexpected
	// stop. Negative is rejected.
	Count int
	// Pod is the UID of the pod whose revival Count already includes, or "".
	// Seeing that pod again (a stale cache, a failed delete, a pod stuck
	// terminating on a lost node) continues the same revival instead of
	// counting another.
	Pod types.UID
}

// Options configure Next and Decide. The zero value never revives (plank's
// max_revivals 0) and has no timeouts.
type Options struct {
	// ErrorOnEviction makes an evicted pod an error instead of a retry.
	ErrorOnEviction bool
	// MaxRevivals is how many times a pod that stopped unexpectedly (evicted,
	// node lost, phase Unknown) is replaced before the job errors. 0 never
	// replaces; DefaultMaxRevivals is plank's default. Negative is rejected.
	MaxRevivals int
	// Timeouts are the pod timeouts Decide checks. Next does not read them:
	// it takes their evaluation as an argument.
	Timeouts plaindl.Timeouts
}

// Validate returns an error for a negative MaxRevivals or a negative timeout,
// naming the field under fldPath (nil means no prefix).
func (o Options) Validate(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if o.MaxRevivals < 0 {
		p := field.NewPath("maxRevivals")
		if fldPath != nil {
			p = fldPath.Child("maxRevivals")
		}
		errs = append(errs, field.Invalid(p, o.MaxRevivals, "must not be negative (0 never replaces the pod)"))
	}
	tp := field.NewPath("timeouts")
	if fldPath != nil {
		tp = fldPath.Child("timeouts")
	}
	return append(errs, deadlines.ValidateTimeouts(o.Timeouts, tp)...)
}

// Step is the next thing to do for a single-pod job.
type Step struct {
	// Action is what to do.
	Action Action
	// Reason is a short CamelCase cause: string(Outcome), MaxRevivals (the pod
	// stopped unexpectedly once too often), or UnscheduledTimeout,
	// PendingTimeout or RunningTimeout (that timeout of package deadlines
	// expired). Action is what to act on; Reason is for the record.
	Reason string
	// Message is the description to record on the job; for terminal actions
	// it is the one plank writes.
	Message string
	// Outcome is the pod's outcome that led to this step.
	Outcome Outcome
	// Container is the container involved, if any (from Result.Container).
	Container string
	// Revivals is the record to write back to the job BEFORE acting (before
	// deleting the pod); for actions other than ActionRetry it is the input
	// unchanged.
	Revivals Revivals
	// DeletePod asks the controller to delete the pod (ignoring NotFound).
	// It is false for a pod that is already terminating.
	DeletePod bool
	// RequeueAfter, for ActionWait, is when the applicable timeout would
	// expire; 0 means no time-based requeue.
	RequeueAfter time.Duration
}

// Next returns the next step for a single-pod job whose pod was classified as
// r, with dl the evaluation of its pod timeouts (from deadlines.Check) and rev
// the revival record stored on the job:
//
//	Succeeded                   Complete  "Job succeeded."
//	Failed                      Fail      "Job failed."
//	FalseSuccess                Error     "Pod was in succeeded phase but some containers didn't finish: ..."
//	OOMKilled                   Error     "Job pod was OOM killed by the cluster."      (pod left alone)
//	Evicted, ErrorOnEviction    Error     "Job pod was evicted by the cluster."         (pod left alone)
//	Evicted, NodeLost, Unknown  Retry, or Error "Job pod reached max revivals (n) after
//	                            being stopped unexpectedly (evicted|unreachable|unknown)"
//	                            once rev.Count >= MaxRevivals                   (pod left alone)
//	Pending                     Error on an expired Unscheduled or Pending timeout (pod deleted),
//	                            else Wait until it would expire
//	Running                     Abort "Pod running timeout." on an expired Running timeout
//	                            (pod deleted), else Wait until it would expire
//	DeletedUnexpectedly         Error on an expired Unscheduled or Pending timeout, else
//	                            Error "Pod got deleted unexpectedly"
//	OtherPhase                  Wait with no requeue
//
// A Retry for a pod whose UID is rev.Pod continues the revival already counted:
// the count is not raised again and the max-revivals check is not repeated.
// Otherwise a Retry returns Revivals{Count: rev.Count + 1, Pod: r.PodUID},
// which the controller must store on the job before it deletes the pod, so a
// crash between the two cannot lose the count.
//
// Errors, matching plaindl.ErrInvalidInput: an Outcome that is not one of the
// constants, a negative MaxRevivals or rev.Count, or a dl whose Kind cannot
// apply to the outcome (a Running timeout for a Pending pod, for example).
// Next is O(1) and allocates only the messages that include numbers or names.
func Next(r Result, dl plaindl.Result, rev Revivals, opts Options) (Step, error) {
	if err := validateNext(r, dl, rev, opts); err != nil {
		return Step{}, err
	}
	s := Step{Outcome: r.Outcome, Container: r.Container, Reason: string(r.Outcome), Revivals: rev}
	switch r.Outcome {
	case OutcomeSucceeded:
		s.Action, s.Message = ActionComplete, messageSucceeded
	case OutcomeFailed:
		s.Action, s.Message = ActionFail, messageFailed
	case OutcomeFalseSuccess:
		s.Action, s.Message = ActionError, withDetail(messageFalseSuccess, r.Message)
	case OutcomeOOMKilled:
		s.Action, s.Message = ActionError, messageOOMKilled
	case OutcomeEvicted:
		if opts.ErrorOnEviction {
			s.Action, s.Message = ActionError, messageEvicted
			break
		}
		revive(&s, r, rev, opts, "evicted")
	case OutcomeNodeLost:
		revive(&s, r, rev, opts, "unreachable")
	case OutcomeUnknown:
		revive(&s, r, rev, opts, "unknown")
	case OutcomePending, OutcomeRunning:
		if dl.Expired {
			timedOut(&s, r, dl)
			break
		}
		s.Action, s.Message, s.RequeueAfter = ActionWait, r.Message, dl.Remaining
	case OutcomeDeleted:
		// A pending pod's timeout is checked before its deletion; a running
		// pod's is not (plank's order).
		if dl.Expired && (dl.Kind == plaindl.KindUnscheduled || dl.Kind == plaindl.KindPending) {
			timedOut(&s, r, dl)
			break
		}
		s.Action, s.Message = ActionError, messageDeleted
	case OutcomeOtherPhase:
		s.Action, s.Message = ActionWait, r.Message
	}
	return s, nil
}

func timedOut(s *Step, r Result, dl plaindl.Result) {
	s.Action = ActionError
	if dl.Kind == plaindl.KindRunning {
		s.Action = ActionAbort
	}
	s.Reason = string(dl.Kind) + "Timeout" // UnscheduledTimeout, PendingTimeout, RunningTimeout
	s.Message = dl.Kind.Reason()
	s.DeletePod = !r.Terminating
}

func revive(s *Step, r Result, rev Revivals, opts Options, cause string) {
	switch {
	case rev.Pod != "" && rev.Pod == r.PodUID:
		s.Action = ActionRetry
		s.Message = fmt.Sprintf("Job pod was stopped unexpectedly (%s); revival %d already recorded, replacing the pod.",
			cause, rev.Count)
	case rev.Count >= opts.MaxRevivals:
		s.Action, s.Reason = ActionError, reasonMaxRevivals
		s.Message = fmt.Sprintf("Job pod reached max revivals (%d) after being stopped unexpectedly (%s)", rev.Count, cause)
		return
	default:
		s.Action = ActionRetry
		s.Revivals = Revivals{Count: rev.Count + 1, Pod: r.PodUID}
		s.Message = fmt.Sprintf("Job pod was stopped unexpectedly (%s); replacing the pod (revival %d of %d).",
			cause, rev.Count+1, opts.MaxRevivals)
	}
	s.DeletePod = !r.Terminating
}

func validateNext(r Result, dl plaindl.Result, rev Revivals, opts Options) error {
	if !r.Outcome.known() {
		return &plaindl.FieldError{Package: "podoutcome", Field: "Result.Outcome", Value: fmt.Sprintf("%q", r.Outcome), Reason: "not an Outcome of this package"}
	}
	if opts.MaxRevivals < 0 {
		return &plaindl.FieldError{Package: "podoutcome", Field: "Options.MaxRevivals", Value: fmt.Sprint(opts.MaxRevivals), Reason: "must not be negative"}
	}
	if rev.Count < 0 {
		return &plaindl.FieldError{Package: "podoutcome", Field: "Revivals.Count", Value: fmt.Sprint(rev.Count), Reason: "must not be negative"}
	}
	ok := true
	switch dl.Kind {
	case plaindl.KindNone:
	case plaindl.KindUnscheduled, plaindl.KindPending:
		ok = r.Outcome != OutcomeRunning
	case plaindl.KindRunning:
		ok = r.Outcome != OutcomePending
	default:
		ok = false
	}
	if !ok {
		return &plaindl.FieldError{Package: "podoutcome", Field: "deadline.Kind", Value: fmt.Sprintf("%q", dl.Kind),
			Reason: fmt.Sprintf("cannot apply to a pod with outcome %s (pod and deadline from different snapshots?)", r.Outcome)}
	}
	return nil
}

// Decide classifies pod, checks its timeouts (opts.Timeouts) at now and
// returns the next step: Classify, deadlines.Check and Next in one call, with
// the first error of the three.
func Decide(pod *corev1.Pod, rev Revivals, opts Options, now time.Time) (Step, error) {
	r, err := Classify(pod)
	if err != nil {
		return Step{}, err
	}
	dl, err := deadlines.Check(pod, opts.Timeouts, now)
	if err != nil {
		return Step{}, err
	}
	return Next(r, dl, rev, opts)
}
