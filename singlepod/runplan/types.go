package runplan

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

// State is where a run is in its life (plank's ProwJob states, without
// scheduling).
type State string

// The states of a run. A run moves from triggered to pending when its pod is
// created or adopted, and from pending to one of the four final states.
const (
	// StateNew is a run the controller has not seen yet (empty status.state):
	// the plan records StateTriggered and the start time first.
	StateNew State = ""
	// StateTriggered is a run waiting for the limits to allow its pod.
	StateTriggered State = "triggered"
	// StatePending is a run whose pod was created and that has not finished.
	StatePending State = "pending"
	// StateSuccess: the pod succeeded, every container exiting with code 0.
	StateSuccess State = "success"
	// StateFailure: the workload failed.
	StateFailure State = "failure"
	// StateError: the infrastructure failed (a pod that cannot be created,
	// never schedules, was evicted too often or claims a false success).
	StateError State = "error"
	// StateAborted: the run was aborted (by a user, by a newer run with the
	// same dedupe key, or by the running timeout).
	StateAborted State = "aborted"
)

// Finished reports whether s is one of the four final states.
func (s State) Finished() bool {
	switch s {
	case StateSuccess, StateFailure, StateError, StateAborted:
		return true
	}
	return false
}

// known reports whether s is one of the constants.
func (s State) known() bool {
	return s == StateNew || s == StateTriggered || s == StatePending || s.Finished()
}

// Run is one single-pod job as plain data: the fields of its spec and status
// that the decision reads. A controller maps its own resource onto it (the
// RunJob of examples/plank is one such mapping; a ProwJob would be another).
type Run struct {
	// UID identifies the run; it is required. The run's pod must have a
	// controller reference with this UID.
	UID types.UID
	// Name is the run's name, used in descriptions ("Superseded by a newer
	// run <Name>.").
	Name string
	// JobName groups runs for MaxConcurrency and dedupe (plank's spec.job).
	JobName string
	// Queue is the run's queue, or "" for none.
	Queue string
	// MaxConcurrency caps how many runs named JobName may have a pod at once,
	// counting this one; 0 means no cap, negative is rejected.
	MaxConcurrency int
	// DedupeKey identifies what the run tests (a pull request); among the
	// unfinished runs with the same JobName and DedupeKey only the newest
	// survives. "" never dedupes.
	DedupeKey string
	// AbortRequested asks to abort the run (a spec field some resources
	// have); a run whose State is StateAborted without Completed asks the
	// same.
	AbortRequested bool

	// State is the run's recorded state; a value other than the constants
	// makes the plan leave the run alone (plank: "anything else: nothing").
	State State
	// Description is the recorded description, kept when a final state is
	// completed unless it is one this package writes for unfinished runs.
	Description string
	// Created is the run's creation time: earlier triggered runs start first.
	Created time.Time
	// StartTime is when the run was first seen (status.startTime); zero for a
	// new run, which the plan stamps with now. The dedupe keeps the latest.
	StartTime time.Time
	// PendingTime is when its first pod was created; zero before that. It
	// stands in for the creation time of a pod that lacks one.
	PendingTime time.Time
	// Completed reports whether the run has a completion time: it is never
	// planned for again and never counts against a limit.
	Completed bool
	// HadPod reports whether a pod was ever created or adopted for the run
	// (status.podName set): an aborted run whose pod is not in the cache
	// then still gets a delete by name.
	HadPod bool
	// Revivals is the revival record stored on the run.
	Revivals podoutcome.Revivals
}

// Input is everything one sync of one run decides from.
type Input struct {
	// Run is the run being reconciled.
	Run Run
	// Pod is the run's pod from the cache (found by name), nil when none. It
	// is never modified.
	Pod *corev1.Pod
	// Peers are the runs sharing the limits and the dedupe key space (all the
	// runs of the namespace, for example); Run itself may be among them.
	Peers []Run
	// Limits are the concurrency limits shared by all runs.
	Limits plainconc.Limits
	// Outcome are the pod outcome options of this run: its timeouts, max
	// revivals and eviction rule.
	Outcome podoutcome.Options
	// CreateErrors selects how a failed pod create is classified.
	CreateErrors CreateErrorPolicy
	// Now is the time of the decision; required.
	Now time.Time
}

// Action is what one sync does with its run.
type Action string

// The actions. Each plan has exactly one.
const (
	// ActionNone: nothing to do until the run changes (it is completed, or
	// its state is not one of the constants).
	ActionNone Action = "None"
	// ActionWait: nothing to do now; record Status.Description when set and
	// requeue after RequeueAfter when positive.
	ActionWait Action = "Wait"
	// ActionCreate: create the run's pod, then record Status (pending).
	ActionCreate Action = "Create"
	// ActionAdopt: the run's pod exists already; record Status (pending).
	ActionAdopt Action = "Adopt"
	// ActionRevive: record Status.Revivals, then apply Pod (release the
	// caller's finalizers, delete unless terminating). The run stays pending
	// and the next sync, finding no pod, creates a new one.
	ActionRevive Action = "Revive"
	// ActionFinish: record Status.State and Status.Description, delete the
	// pod when Pod.Delete, then record the completion time.
	ActionFinish Action = "Finish"
	// ActionBackoff: the sync failed transiently (a create error worth
	// retrying); return the error so that the work queue backs off. Only
	// Plan.CreateFailed returns it.
	ActionBackoff Action = "Backoff"
)

// Reasons of the plans that do not come from package podoutcome (whose step
// reasons, such as "Running", "Evicted" or "PendingTimeout", are passed on)
// nor from package plain/concurrency (whose limits "MaxPending", "MaxConcurrency"
// and "Queue" are the reasons of a run held back).
const (
	// reasonCompleted: the run has a completion time.
	reasonCompleted = "Completed"
	// reasonUnknownState: the state is not one of the constants.
	reasonUnknownState = "UnknownState"
	// reasonStart: the limits allow the run: create its pod.
	reasonStart = "Start"
	// reasonPodExists: a triggered run's pod exists: adopt it.
	reasonPodExists = "PodExists"
	// reasonPodMissing: a pending run's pod is gone: create it again.
	reasonPodMissing = "PodMissing"
	// reasonNotOurPod: a pod with the run's name is not controlled by it.
	reasonNotOurPod = "PodNotControlled"
	// reasonSuperseded: a newer run with the same dedupe key exists.
	reasonSuperseded = "Superseded"
	// reasonAbortRequested: the run was asked to abort.
	reasonAbortRequested = "AbortRequested"
	// reasonFinalState: a final state was recorded without completion.
	reasonFinalState = "FinalState"
	// reasonNoCreationTime: the pod lacks the creation time its timeout needs.
	reasonNoCreationTime = "NoCreationTime"
	// reasonCreateRefused: the API server refused the pod for good.
	reasonCreateRefused = "CreateRefused"
	// reasonCreateExists: the pod exists already (409): adopt on the next sync.
	reasonCreateExists = "CreateExists"
	// reasonCreateFailed: a create error worth retrying.
	reasonCreateFailed = "CreateFailed"
)

// Descriptions this package records (the package doc lists them). Only the
// prefix of a refused create is exported: package reconcile words a refused
// create of any owner's pod the same way.
const (
	// messageTriggered is the description of a run whose pod was created or
	// adopted (plank's wording).
	messageTriggered = "Job triggered."
	// messageWaiting begins the description of a run held back; the reason
	// follows after ": ".
	messageWaiting = "Waiting"
	// messageAborted is the description of an aborted run that had none of
	// its own.
	messageAborted = "Job aborted."
	// messageSuperseded begins the description of a superseded run; the newer
	// run's name follows.
	messageSuperseded = "Superseded by a newer run"
	// messageReplacing begins the description of a run whose pod is being
	// replaced after it stopped unexpectedly.
	messageReplacing = "Replacing pod"
	// MessageCreateRefused begins the description of a run whose pod the API
	// server refused; the error follows after ": " (plank's wording).
	MessageCreateRefused = "Pod can not be created"
)

// Status is what to record on the run's status. Zero fields leave the
// recorded value alone.
type Status struct {
	// State is the state to record, or "" to keep it.
	State State
	// Description is the description to record, or "" to keep it.
	Description string
	// PendingTime, when not zero, is recorded (the first pod of the run).
	PendingTime time.Time
	// Revivals, when not nil, is the revival record to write BEFORE the pod
	// is deleted, so that a crash in between cannot lose a revival.
	Revivals *podoutcome.Revivals
	// Complete asks to record the completion time (now), after the pod is
	// deleted when Pod.Delete.
	Complete bool
}

// PodEffects are what the caller does to the run's pod itself.
type PodEffects struct {
	// Create asks to create the run's pod (ActionCreate).
	Create bool
	// Delete asks to delete the run's pod, ignoring NotFound; with UID as a
	// precondition when set, so that a replacement with the same name
	// survives, and by name when UID is empty (the cache shows no pod, but
	// the run had one).
	Delete bool
	// UID is the UID of the pod the plan judged, or "" when none.
	UID types.UID
	// Terminating reports that the pod is already being deleted: there is
	// nothing to delete, the pod goes away by itself once the caller's own
	// finalizers (if any) are gone.
	Terminating bool
	// ReleaseFinalizers asks the caller to remove its own finalizers from the
	// pod (a reporter's, for example), whether it deletes the pod or the pod
	// is already terminating. It is set when the pod is replaced (Revive):
	// that pod's result is never reported, and a pod kept by a finalizer
	// would block its replacement, which has the same name. A finished run's
	// pod keeps them: the reporter reports the run and releases the pod.
	ReleaseFinalizers bool
}

// Supersession is an older run the dedupe aborts.
type Supersession struct {
	// UID and Name identify the run.
	UID  types.UID
	Name string
	// Description is what to record with StateAborted ("Superseded by a
	// newer run <name>.").
	Description string
}

// Plan is the decision of one sync of one run: plain data, computed without
// I/O. A caller executes it in this order:
//
//  1. StartTime not zero (a new run): record StateTriggered and StartTime.
//  2. Supersede: record StateAborted and the description on each listed run
//     (never its completion: that run's own sync deletes its pod and
//     completes it).
//  3. By Action:
//     - Create: create the pod (on an error, execute CreateFailed(err)
//     instead), then record Status;
//     - Adopt: record Status;
//     - Wait: record Status.Description when it differs;
//     - Revive: record Status (the revival first), then release the
//     caller's finalizers from the pod and delete it (Pod);
//     - Finish: record Status.State and Description (with the completion
//     time unless Pod.Delete), then delete the pod, then record the
//     completion time;
//     - Backoff: return the error; None: nothing.
//  4. Requeue after RequeueAfter when positive.
//
// The order keeps a run exact across crashes: a revival is recorded before
// its pod goes; a timed-out run records its final state before its pod goes,
// so a failed write cannot make the next sync recreate the pod; and a run is
// only completed once its pod is gone.
type Plan struct {
	// Action is what to do; Reason says why, in one CamelCase word.
	Action Action
	Reason string
	// StartTime, when not zero, is the start time of a new run, recorded with
	// StateTriggered before anything else.
	StartTime time.Time
	// Supersede lists the older runs the dedupe aborts.
	Supersede []Supersession
	// Status is what to record on this run.
	Status Status
	// Pod is what to do to the run's pod.
	Pod PodEffects
	// RequeueAfter, when positive, asks for another sync after that delay.
	RequeueAfter time.Duration
	// CreateErrors is the policy CreateFailed applies (from Input).
	CreateErrors CreateErrorPolicy
}

// String returns a one-line summary, e.g.
// "Finish(PendingTimeout) state=error delete-pod complete "Pod pending timeout."".
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s)", p.Action, p.Reason)
	if !p.StartTime.IsZero() {
		b.WriteString(" start")
	}
	for _, s := range p.Supersede {
		fmt.Fprintf(&b, " supersede=%s", s.Name)
	}
	if p.Status.State != "" {
		fmt.Fprintf(&b, " state=%s", p.Status.State)
	}
	if p.Status.Revivals != nil {
		fmt.Fprintf(&b, " revivals=%d", p.Status.Revivals.Count)
	}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{p.Pod.Create, "create-pod"}, {p.Pod.Delete, "delete-pod"}, {p.Pod.Terminating, "pod-terminating"},
		{p.Pod.ReleaseFinalizers, "release-finalizers"}, {p.Status.Complete, "complete"},
	} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if p.RequeueAfter > 0 {
		fmt.Fprintf(&b, " requeue=%s", p.RequeueAfter)
	}
	if p.Status.Description != "" {
		fmt.Fprintf(&b, " %q", p.Status.Description)
	}
	return b.String()
}
