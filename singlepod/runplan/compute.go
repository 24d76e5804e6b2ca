package runplan

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

// existsRetry is how soon a run whose pod create answered AlreadyExists looks
// again, by when the cache normally shows the pod to adopt.
const existsRetry = time.Second

// Compute decides one sync of in.Run. The first rule that applies wins:
//
//  1. a completed run: None; a state that is not a constant: None
//     (plank leaves such a job alone);
//  2. a new run (StateNew): record StateTriggered and StartTime now first,
//     then go on as a triggered run;
//  3. dedupe: among the unfinished runs (not completed, state new, triggered
//     or pending, no abort requested) with the run's JobName and its
//     non-empty DedupeKey, the newest survives: the latest StartTime (a zero
//     one, a run not seen yet, counts as now), then the latest creation time,
//     then the greater UID, so every sync agrees. Older runs are superseded
//     (Plan.Supersede); a run that is itself superseded finishes as aborted
//     and its pod is deleted;
//  4. an abort requested (AbortRequested, or StateAborted without Completed)
//     or another final state recorded without completion: Finish in that
//     state, deleting the pod first;
//  5. a pod with the run's name that the run does not control: Finish with
//     StateError (the pod is left alone);
//  6. triggered with a pod: Adopt, without asking the limits (plank);
//     triggered without a pod: concurrency.Decide; held back, Wait with the
//     limit as reason and "Waiting: <why>" as description; allowed, Create;
//     a queue missing from Limits.Queues is a *plaindl.FieldError naming Run.Queue
//     (invalid configuration; plank fails the sync too, and retries it);
//  7. pending without a pod: Create again at once (PodMissing), without
//     asking the limits (plank);
//  8. pending with a pod: podoutcome decides. Wait passes on its reason and
//     requeue; Retry becomes Revive (the new record in Status.Revivals when
//     it changed); a terminal step becomes Finish (success, failure, error,
//     aborted) with plank's description, deleting the pod on a timeout.
//
// A pod that lacks the creation time its unscheduled timeout is measured
// from is measured from Run.PendingTime, or, without one, waits (reason
// NoCreationTime, requeue after Limits.RetryAfter) instead of failing.
//
// Errors, a [*plaindl.FieldError] (Package "runplan") matching
// plaindl.ErrInvalidInput and naming the field: an empty Run.UID, a zero Now, a
// negative Run.MaxConcurrency, Run.Revivals.Count, Limits.MaxPending,
// Limits.RetryAfter, Outcome.MaxRevivals or timeout, an unknown CreateErrors policy, an empty queue name in
// Limits.Queues. A peer in a state that
// is not a constant counts against no limit and is never superseded.
//
// Compute does not modify in. It is O(len(Peers)) for dedupe and, for a
// triggered run without a pod, O(len(Peers)) with one allocation of the
// peers for concurrency.Decide; otherwise it does not allocate beyond the
// descriptions it writes.
func Compute(in Input) (Plan, error) {
	if err := validate(&in); err != nil {
		return Plan{}, err
	}
	run := in.Run
	p := Plan{CreateErrors: in.CreateErrors}
	switch {
	case run.Completed:
		p.Action, p.Reason = ActionNone, reasonCompleted
		return p, nil
	case !run.State.known():
		p.Action, p.Reason = ActionNone, reasonUnknownState
		return p, nil
	case run.State == StateNew:
		p.StartTime = in.Now
		run.State, run.StartTime = StateTriggered, in.Now
	}

	if d := Deduplicate(run, in.Peers, in.Now); d.NewestUID != "" {
		p.Supersede = d.Others
		if d.Self {
			return finish(p, &run, in.Pod, StateAborted, reasonSuperseded, d.Description, true), nil
		}
	}

	owned := in.Pod == nil || controlledBy(in.Pod, run.UID)
	switch {
	case run.AbortRequested && !run.State.Finished():
		return finish(p, &run, in.Pod, StateAborted, reasonAbortRequested, messageAborted, true), nil
	case run.State.Finished():
		desc := run.Description
		if run.State == StateAborted && transient(desc) {
			desc = messageAborted
		}
		return finish(p, &run, in.Pod, run.State, reasonFinalState, desc, true), nil
	case !owned:
		return finish(p, &run, in.Pod, StateError, reasonNotOurPod,
			fmt.Sprintf("Pod %s exists and does not belong to this run", in.Pod.Name), false), nil
	case run.State == StateTriggered:
		return triggered(p, &run, &in)
	}
	return pending(p, &run, &in)
}

// triggered decides for a run that has no pod yet as far as its state says.
func triggered(p Plan, run *Run, in *Input) (Plan, error) {
	started := Status{State: StatePending, Description: messageTriggered}
	if run.PendingTime.IsZero() {
		started.PendingTime = in.Now
	}
	if in.Pod != nil {
		p.Action, p.Reason, p.Status, p.Pod.UID = ActionAdopt, reasonPodExists, started, in.Pod.UID
		return p, nil
	}
	peers := make([]plainconc.Peer[types.UID], len(in.Peers))
	for i := range in.Peers {
		peers[i] = peerOf(&in.Peers[i])
	}
	d, err := plainconc.Decide(plainconc.Candidate[types.UID]{Peer: peerOf(run), MaxConcurrency: run.MaxConcurrency}, peers, in.Limits)
	switch {
	case errors.Is(err, plainconc.ErrUnknownQueue):
		// Invalid configuration, as in plank: the sync fails (and is retried, so a
		// configuration that gains the queue later starts the run).
		return Plan{}, &plaindl.FieldError{Package: "runplan", Field: "Run.Queue", Value: strconv.Quote(run.Queue), Reason: "not a queue of Limits.Queues"}
	case err != nil:
		return Plan{}, err // validated before: only a bug gets here
	case !d.Allowed:
		p.Action, p.Reason, p.RequeueAfter = ActionWait, string(d.BlockedBy), d.RetryAfter
		p.Status.Description = changed(run.Description, messageWaiting+": "+d.Message)
		return p, nil
	}
	p.Action, p.Reason, p.Status, p.Pod.Create = ActionCreate, reasonStart, started, true
	return p, nil
}

// pending decides for a run whose pod was created.
func pending(p Plan, run *Run, in *Input) (Plan, error) {
	pod := in.Pod
	if pod == nil {
		p.Action, p.Reason, p.Pod.Create = ActionCreate, reasonPodMissing, true
		if run.PendingTime.IsZero() {
			p.Status.PendingTime = in.Now
		}
		return p, nil
	}
	p.Pod.UID = pod.UID
	r, err := podoutcome.Classify(pod)
	if err != nil {
		return Plan{}, err
	}
	dl, err := deadlines.Check(timedPod(pod, run), in.Outcome.Timeouts, in.Now)
	if err != nil {
		// Only a missing creation time gets here (timeouts were validated).
		if r.Outcome == podoutcome.OutcomePending {
			p.Action, p.Reason, p.RequeueAfter = ActionWait, reasonNoCreationTime, retryAfter(in.Limits)
			return p, nil
		}
		dl = plaindl.Result{}
	}
	step, err := podoutcome.Next(r, dl, run.Revivals, in.Outcome)
	if err != nil {
		return Plan{}, err
	}
	switch step.Action {
	case podoutcome.ActionWait:
		p.Action, p.Reason, p.RequeueAfter = ActionWait, step.Reason, step.RequeueAfter
		return p, nil
	case podoutcome.ActionRetry:
		p.Action, p.Reason = ActionRevive, step.Reason
		if step.Revivals != run.Revivals {
			rev := step.Revivals
			p.Status.Revivals = &rev
			p.Status.Description = fmt.Sprintf("%s %s (%s), revival %d.", messageReplacing, pod.Name, step.Reason, rev.Count)
		}
		p.Pod = PodEffects{Delete: step.DeletePod, UID: pod.UID, Terminating: !step.DeletePod, ReleaseFinalizers: true}
		return p, nil
	}
	return finish(p, run, pod, finalStates[step.Action], step.Reason, step.Message, step.DeletePod), nil
}

var finalStates = map[podoutcome.Action]State{
	podoutcome.ActionComplete: StateSuccess,
	podoutcome.ActionFail:     StateFailure,
	podoutcome.ActionError:    StateError,
	podoutcome.ActionAbort:    StateAborted,
}

// finish returns p as a Finish in state; with deletePod the run's pod (if
// it controls one) is deleted first, or by name when the cache shows none
// but the run had one.
func finish(p Plan, run *Run, pod *corev1.Pod, state State, reason, desc string, deletePod bool) Plan {
	p.Action, p.Reason = ActionFinish, reason
	p.Status = Status{State: state, Description: desc, Complete: true}
	switch {
	case pod == nil:
		p.Pod.Delete = deletePod && run.HadPod
	case !controlledBy(pod, run.UID):
	case pod.DeletionTimestamp != nil:
		p.Pod.UID, p.Pod.Terminating = pod.UID, true
	default:
		p.Pod.UID, p.Pod.Delete = pod.UID, deletePod
	}
	return p
}

// timedPod returns pod, or a shallow copy with Run.PendingTime as creation
// time when the pod has none (a fake client's pods) and the run has one.
func timedPod(pod *corev1.Pod, run *Run) *corev1.Pod {
	if !pod.CreationTimestamp.IsZero() || run.PendingTime.IsZero() {
		return pod
	}
	c := *pod
	c.CreationTimestamp = metav1.NewTime(run.PendingTime)
	return &c
}

// controlledBy reports whether pod's controller reference names uid.
func controlledBy(pod *corev1.Pod, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.UID == uid
}

// peerOf describes r for concurrency.Decide. A run asked to abort still
// holds its slot while it has a pod (pending), and waits for none otherwise.
func peerOf(r *Run) plainconc.Peer[types.UID] {
	state := plainconc.StateFinished
	switch {
	case r.Completed:
	case r.State == StatePending:
		state = plainconc.StatePending
	case (r.State == StateNew || r.State == StateTriggered) && !r.AbortRequested:
		state = plainconc.StateTriggered
	}
	return plainconc.Peer[types.UID]{UID: r.UID, JobName: r.JobName, Queue: r.Queue, State: state, Created: r.Created}
}

// transient reports whether desc is empty or one this package writes for a
// run that has not finished, which a completed aborted run must not keep.
func transient(desc string) bool {
	return desc == "" || desc == messageTriggered || hasPrefix(desc, messageWaiting+": ") || hasPrefix(desc, messageReplacing+" ")
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

// changed returns want, or "" when the run already records it.
func changed(have, want string) string {
	if have == want {
		return ""
	}
	return want
}

func retryAfter(l plainconc.Limits) time.Duration {
	if l.RetryAfter > 0 {
		return l.RetryAfter
	}
	return plainconc.DefaultRetryAfter
}

func validate(in *Input) error {
	bad := func(f string, v any, reason string) error {
		return &plaindl.FieldError{Package: "runplan", Field: f, Value: fmt.Sprint(v), Reason: reason}
	}
	switch {
	case in.Run.UID == "":
		return bad("Run.UID", `""`, "required to tell the run from its peers and its pod's owner")
	case in.Now.IsZero():
		return bad("Now", "zero", "required: every decision takes the time as an argument")
	case in.Run.MaxConcurrency < 0:
		return bad("Run.MaxConcurrency", in.Run.MaxConcurrency, "must not be negative (0 means no cap)")
	case in.Run.MaxConcurrency > 0 && in.Run.JobName == "":
		return bad("Run.JobName", `""`, "required when MaxConcurrency is set")
	case in.Run.Revivals.Count < 0:
		return bad("Run.Revivals.Count", in.Run.Revivals.Count, "must not be negative")
	case in.Limits.MaxPending < 0:
		return bad("Limits.MaxPending", in.Limits.MaxPending, "must not be negative (0 means no cap)")
	case in.Limits.RetryAfter < 0:
		return bad("Limits.RetryAfter", in.Limits.RetryAfter, "must not be negative")
	case in.CreateErrors != CreateErrorsJobkit && in.CreateErrors != CreateErrorsPlank:
		return bad("CreateErrors", fmt.Sprintf("%q", in.CreateErrors), fmt.Sprintf("must be %q or %q", CreateErrorsJobkit, CreateErrorsPlank))
	}
	if _, ok := in.Limits.Queues[""]; ok {
		return bad("Limits.Queues", `""`, "a queue name must not be empty")
	}
	o := &in.Outcome
	if o.MaxRevivals < 0 || o.Timeouts.Unscheduled < 0 || o.Timeouts.Pending < 0 || o.Timeouts.Running < 0 {
		// Validate builds field paths: only on the error path.
		if errs := o.Validate(field.NewPath("Outcome")); len(errs) > 0 {
			return bad(errs[0].Field, errs[0].BadValue, errs[0].Detail)
		}
	}
	return nil
}

// Holds reports whether r counts against the limits of other runs: it is
// not completed and either has a pod (pending) or waits for one (new or
// triggered, without an abort request), so that younger runs wait behind it.
// A controller wakes the runs waiting behind r when Holds turns false.
func Holds(r Run) bool { return peerOf(&r).State != plainconc.StateFinished }

// Waits reports whether r waits for the limits to let it start: not
// completed, new or triggered, no abort requested.
func Waits(r Run) bool { return peerOf(&r).State == plainconc.StateTriggered }

// SharesLimit reports whether other can hold waiting back under limits: a
// global cap applies, or they share a job name that waiting caps, or a
// queue. It does not look at states (see Holds and Waits).
func SharesLimit(waiting, other Run, limits plainconc.Limits) bool {
	return limits.MaxPending > 0 ||
		(waiting.MaxConcurrency > 0 && waiting.JobName == other.JobName) ||
		(waiting.Queue != "" && waiting.Queue == other.Queue)
}
