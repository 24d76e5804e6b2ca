package explain

import (
	"time"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Class is a class of pods in a Report. A pod is in one or more classes (an active
// pod may also be ready, a succeeded pod may also be uncounted).
type Class string

// The classes of pods, in the order the text output lists them.
const (
	// ClassActive: not terminal and not being deleted.
	ClassActive Class = "active"
	// ClassReady: active with the Ready condition True.
	ClassReady Class = "ready"
	// ClassTerminating: not terminal and being deleted.
	ClassTerminating Class = "terminating"
	// ClassSucceeded: phase Succeeded.
	ClassSucceeded Class = "succeeded"
	// ClassFailed: phase Failed.
	ClassFailed Class = "failed"
	// ClassUncounted: finished (or, unless podReplacementPolicy is Failed, being
	// deleted) and still carrying the tracking finalizer: not yet in the status
	// counters.
	ClassUncounted Class = "uncounted"
	// ClassFinalizerLeft: finished and still carrying the tracking finalizer after
	// its owner finished: the status counters are final, so the pod is not counted
	// again; only its finalizer is left to remove.
	ClassFinalizerLeft Class = "finalizer-left"
	// ClassOrphan: without a controller, matching the Job's selector: the controller
	// adopts it.
	ClassOrphan Class = "orphan"
	// ClassDuplicateIndex: an active pod of an Indexed Job whose index another active
	// pod keeps; the controller deletes it.
	ClassDuplicateIndex Class = "duplicate-index"
	// ClassStray: an active pod of an Indexed Job without a valid index, or with an
	// index at or above completions; the controller deletes it.
	ClassStray Class = "stray"
	// ClassReleased: owned by the Job, but its labels no longer match the selector;
	// the controller releases it.
	ClassReleased Class = "released"
	// ClassIgnored: in the input but not the Job's (another controller's pod, a pod
	// of another namespace, an orphan that does not match the selector). Such pods
	// are not counted; a pod of a deleted Job of the same name appears here and in
	// the diagnostics when it keeps the tracking finalizer.
	ClassIgnored Class = "ignored"
)

// Classes lists every Class in output order.
var Classes = []Class{ClassActive, ClassReady, ClassTerminating, ClassSucceeded, ClassFailed,
	ClassUncounted, ClassFinalizerLeft, ClassOrphan, ClassDuplicateIndex, ClassStray, ClassReleased, ClassIgnored}

// Report is the explanation of one sync of a Job: what the pods are, what the
// controller would do and why, when it would look again, what blocks progress and
// what looks wrong. It is plain data, written as text (Report.Text), JSON or YAML.
type Report struct {
	// Job identifies the Job.
	Job JobInfo `json:"job"`
	// Controller is the controller name the plan was computed for (spec.managedBy).
	Controller string `json:"controller"`
	// Now is the time of the planned sync.
	Now time.Time `json:"now"`
	// Assumed lists the what-if outcomes applied before planning (--assume).
	Assumed []string `json:"assumed,omitempty"`
	// Pods lists every pod of the input with its classes, in input order.
	Pods []Pod `json:"pods"`
	// Skip is set when the controller would not handle the Job at all.
	Skip string `json:"skip,omitempty"`
	// Decisions are the actions of the plan in execution order, each with its reason.
	Decisions []Decision `json:"decisions,omitempty"`
	// StatusChanges is the field-by-field difference between the Job's status and
	// the status the plan writes (after every planned finalizer removal succeeds).
	StatusChanges []FieldChange `json:"statusChanges,omitempty"`
	// Requeue says when the controller would look again and why; nil when it would
	// wait for the next event.
	Requeue *Requeue `json:"requeue,omitempty"`
	// IndexBackoff lists the indexes whose replacement pod waits for its per-index
	// backoff (backoffLimitPerIndex), earliest first.
	IndexBackoff []IndexWait `json:"indexBackoff,omitempty"`
	// Limits say where the Job stands against each limit of its spec, with the
	// numbers: "backoffLimit: 2 of 6 failure(s) used", "index 1: 2 failure(s),
	// backoffLimitPerIndex 1: failed for good", the time left of
	// activeDeadlineSeconds, the pod failure backoff in force.
	Limits []string `json:"limits,omitempty"`
	// Blockers say what keeps the Job from progressing when the plan creates and
	// deletes nothing.
	Blockers []string `json:"blockers,omitempty"`
	// Diagnostics list what looks wrong in the Job and its pods.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Warnings are the plan's own warnings about bad data it worked around.
	Warnings []string `json:"warnings,omitempty"`
	// Steps are the syncs of a what-if run (Steps), when one was asked for.
	Steps []Step `json:"steps,omitempty"`
}

// JobInfo identifies the Job (or the owner of another kind) and its shape.
type JobInfo struct {
	// APIVersion, Kind and Finalizer name the owner's kind and the tracking
	// finalizer of its pods (Options.Owner); all three are empty for a batch/v1
	// Job, whose finalizer is batchv1.JobTrackingFinalizer.
	APIVersion  string `json:"apiVersion,omitempty"`
	Kind        string `json:"kind,omitempty"`
	Finalizer   string `json:"finalizer,omitempty"`
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	UID         string `json:"uid,omitempty"`
	ManagedBy   string `json:"managedBy,omitempty"`
	Mode        string `json:"completionMode"`
	Completions *int32 `json:"completions,omitempty"`
	Parallelism int32  `json:"parallelism"`
	Suspended   bool   `json:"suspended,omitempty"`
	Deleting    bool   `json:"deleting,omitempty"`
	Finished    string `json:"finished,omitempty"`
}

// Pod is one pod of the input with its classes.
type Pod struct {
	Name string `json:"name"`
	UID  string `json:"uid,omitempty"`
	// Index is the completion index of a pod of an Indexed Job, when valid.
	Index     *int    `json:"index,omitempty"`
	Phase     string  `json:"phase"`
	Finalizer bool    `json:"finalizer"`
	Classes   []Class `json:"classes"`
	// Note says more about the classes (why a pod is ignored, whether an uncounted
	// pod is already in status.uncountedTerminatedPods).
	Note string `json:"note,omitempty"`
}

// Decision actions.
const (
	ActionAdopt           = "adopt"
	ActionRelease         = "release"
	ActionRecord          = "record"
	ActionRemoveFinalizer = "remove-finalizer"
	ActionDelete          = "delete"
	ActionCreate          = "create"
	ActionCondition       = "condition"
	ActionEvent           = "event"
)

// Decision is one action of the plan with its reason.
type Decision struct {
	// Action is one of the Action constants.
	Action string `json:"action"`
	// Pod names the pod acted on (adopt, release, remove-finalizer, delete).
	Pod string `json:"pod,omitempty"`
	// Index is the completion index of a creation for an Indexed Job.
	Index *int `json:"index,omitempty"`
	// What details the action (a condition, the entries recorded, "remove the
	// finalizer first").
	What   string `json:"what,omitempty"`
	Reason string `json:"reason"`
}

// FieldChange is one field of the status that the plan changes. From and To are
// the values as JSON; an empty string means unset.
type FieldChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Requeue is when the controller would look again.
type Requeue struct {
	After  Duration `json:"after"`
	Reason string   `json:"reason"`
}

// IndexWait is an index waiting for its per-index backoff.
type IndexWait struct {
	Index     int      `json:"index"`
	Failures  int      `json:"failures"`
	Remaining Duration `json:"remaining"`
}

// Diagnostic kinds.
const (
	DiagFinalizerAfterFinish = "finalizer-after-finish"
	DiagFinalizerJobDeleted  = "finalizer-job-deleted"
	DiagInvalidStatus        = "invalid-status"
	DiagRefusedWrite         = "refused-write"
	DiagCounterMismatch      = "counter-mismatch"
	DiagInvalidFailurePolicy = "invalid-failure-policy"
	DiagInvalidSuccessPolicy = "invalid-success-policy"
	DiagBadIndex             = "bad-index-annotation"
	DiagObjectSize           = "object-size"
)

// Diagnostic is something that looks wrong, with the field or pods concerned.
type Diagnostic struct {
	// Kind is one of the Diag constants.
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Duration is a time.Duration written as text ("37s") in JSON and YAML.
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// String is time.Duration's.
func (d Duration) String() string { return time.Duration(d).String() }

// Options are the assumptions of an explanation. The zero value explains as the
// Job's own controller at the zero time with the default backoff; callers set Now.
type Options struct {
	// Controller is the name of the controller to plan as; empty means the Job's
	// spec.managedBy, or batchv1.JobControllerName when unset.
	Controller string
	// Now is the time of the planned sync.
	Now time.Time
	// Backoff is the pod failure backoff; the zero value is 10s doubling to 10m.
	Backoff plainbackoff.Policy
	// ExpectationsUnsatisfied plans as a controller that has not yet observed some of
	// its own creations or deletions: it creates, deletes and finishes nothing.
	ExpectationsUnsatisfied bool
	// Assume lists what-if pod outcomes applied before planning (see ParseAssumption).
	Assume []Assumption
	// Owner is the kind of the owner being explained and the tracking finalizer of
	// its pods: a pod is the owner's when its controller reference is of this kind
	// (any version of its group) with the owner's UID, and it is counted through
	// this finalizer. The zero value is owner.BatchJob. Steps runs an owner of
	// another kind as an object of that kind.
	Owner owner.Kind
}
