package plan

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Plan is the decision of one sync: plain data, computed without I/O. A caller
// executes it in this order, which keeps the count exact across crashes:
//
//  1. Adopt and Release (patches of controller references; a release also removes
//     the tracking finalizer, in the same patch);
//  2. write RecordStatus when it is not nil: it holds the new uncountedTerminatedPods
//     entries, completed and failed indexes and interim conditions, which must be
//     persisted before any finalizer is removed;
//  3. remove the finalizers of RemoveFinalizers;
//  4. call Settle with the UIDs whose removal succeeded and write its Status when
//     Changed;
//  5. delete the pods of Delete (removing the finalizer first when asked), then create
//     the pods of Create.
//
// Creating a pod counts nothing, so a plan with no Delete and no Conditions may
// have its creations made beside steps 2 to 4 instead (package reconcile does, once
// the Job has started).
//
// Status is what step 4 yields when every removal succeeds.
type Plan struct {
	// Skip is set when the Job is not to be handled at all (another controller owns
	// it, or it has finished and none of its pods carries the finalizer); every other
	// field is then empty.
	Skip string

	// Adopt lists orphan pods matching the selector to take over, with the tracking
	// finalizer. Release lists owned pods whose labels no longer match.
	Adopt   []PodAction
	Release []PodAction

	// RecordStatus is the status to write before removing finalizers, or nil when
	// nothing new must be persisted first.
	RecordStatus *batchv1.JobStatus
	// RemoveFinalizers lists the pods whose tracking finalizer to remove (step 3).
	RemoveFinalizers []PodAction
	// Status is the final status assuming every finalizer removal succeeds;
	// StatusChanged says whether it differs from the Job's current status.
	Status        batchv1.JobStatus
	StatusChanged bool

	// Delete lists pods to delete (step 5); Create lists pods to create.
	Delete []Deletion
	Create []Creation

	// Conditions lists the condition changes of this sync with their reasons.
	Conditions []ConditionChange
	// Events lists the events of this sync's decisions (Suspended, Resumed). The
	// events of finishing (Completed, TooManySucceededPods, the failure reason) depend
	// on the finalizer removals and come with Settled.Events.
	Events []Event
	// Backoff is the failure record to keep for the next sync.
	Backoff plainbackoff.Record
	// RequeueAfter, when positive, asks for another sync after that delay (backoff or
	// active deadline); RequeueReason says why.
	RequeueAfter  time.Duration
	RequeueReason string
	// FailurePolicyActions counts the newly failed pods per pod failure policy action
	// (for metrics).
	FailurePolicyActions map[batchv1.PodFailurePolicyAction]int
	// Warnings lists bad input the plan worked around (an unparsable completed
	// indexes string, a bad index annotation...), each naming the field and value.
	Warnings []string

	// Settlement is what step 4 needs: Settle reads it and nothing else of the plan.
	Settlement Settlement
}

// PodAction is a pod with the reason the plan acts on it.
type PodAction struct {
	Pod    *corev1.Pod
	Reason string
}

// Deletion is a pod to delete.
type Deletion struct {
	Pod *corev1.Pod
	// RemoveFinalizerFirst asks to remove the tracking finalizer before deleting, so
	// that the pod is not counted as failed (scale-down, suspend, strays).
	RemoveFinalizerFirst bool
	Reason               string
}

// Creation is a pod to create. Pod is complete: namespace, generateName, labels,
// annotations, finalizer, owner reference and, for Indexed Jobs, the index shape.
type Creation struct {
	Pod *corev1.Pod
	// Index is the completion index, or -1 for NonIndexed Jobs.
	Index  int
	Reason string
}

// ConditionChange is a condition the plan sets, with why.
type ConditionChange struct {
	Type    batchv1.JobConditionType
	Status  corev1.ConditionStatus
	Reason  string
	Message string
}

// Event is an event to record on the Job.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type    string
	Reason  string
	Message string
}

// Settled is the status after finalizer removals, from Plan.Settle.
type Settled struct {
	// Status is the status to write.
	Status batchv1.JobStatus
	// Changed is true when Status differs from what the caller last wrote or read
	// (RecordStatus when the plan had one, else the Job's status).
	Changed bool
	// Finished is the terminal condition added in this sync, or nil.
	Finished *batchv1.JobCondition
	// Events are the events of finishing (Completed, the failure reason).
	Events []Event
}

// Settlement is everything Plan.Settle needs to finish a sync after the finalizer
// removals of step 3: plain data, so that settling is a pure function of the Plan and
// the set of removals that succeeded. Compute fills it in; a caller only passes it on.
type Settlement struct {
	// Base is the status after step 2: RecordStatus when the plan has one, else the
	// status the plan would have recorded, which persists nothing new.
	Base batchv1.JobStatus
	// Previous is the status the caller holds before step 4: RecordStatus when the
	// plan has one, else the Job's status as read. Settled.Changed compares with it.
	// It may share memory with the input Job's status: never modify it.
	Previous batchv1.JobStatus
	// Held lists the UIDs of Base.UncountedTerminatedPods whose pods still carry the
	// tracking finalizer in the cache, with no removal pending: they stay uncounted
	// unless their removal succeeds in step 3. Every other UID of the ledger is
	// counted by Settle.
	Held []types.UID
	// Removing lists the UIDs of RemoveFinalizers: the Job finishes in this sync only
	// when every one of these removals succeeds (as upstream).
	Removing []types.UID
	// Finish is the terminal condition (Complete or Failed) to add once nothing is
	// uncounted, active or terminating, or nil when the Job does not finish.
	Finish *batchv1.JobCondition
	// CanFinish is false when expectations are unsatisfied, a pod stays active or
	// the ledger is full (MaxUncounted reached): the Job then does not finish in
	// this sync, whatever the removals.
	CanFinish bool
	// Terminating is the number of pods being deleted, those this plan deletes
	// included: the Job finishes only when it is 0.
	Terminating int32
	// Completions is spec.completions with the API's default (nil for a work queue),
	// used to warn about too many succeeded pods on completion. It may point into the
	// input Job's spec: never modify it.
	Completions *int32
	// Now is the time of the sync: that of the terminal condition, completionTime and,
	// when the Job has none, startTime.
	Now time.Time
	// Owner is the owner's kind (Input.Owner), named in the messages of the events
	// of finishing ("TrainingJob completed"); the zero value means owner.BatchJob
	// ("Job completed").
	Owner owner.Kind
	// DeferPodCounts is set when expectations are unsatisfied: the cache is about to
	// show pods created or deleted, so a status that changes only counts recomputed
	// from the pods (active, ready, terminating, an Indexed Job's succeeded indexes)
	// waits for it instead of being written twice (Settled.Changed false).
	DeferPodCounts bool
}

// kind returns Owner, or owner.BatchJob when it is the zero value.
func (s *Settlement) kind() owner.Kind {
	if s.Owner == (owner.Kind{}) {
		return owner.BatchJob
	}
	return s.Owner
}

// IsEmpty reports whether the plan asks for nothing: no API call and no requeue.
func (p *Plan) IsEmpty() bool {
	return len(p.Adopt) == 0 && len(p.Release) == 0 && p.RecordStatus == nil &&
		len(p.RemoveFinalizers) == 0 && !p.StatusChanged && len(p.Delete) == 0 &&
		len(p.Create) == 0 && p.RequeueAfter == 0
}

// String renders the plan in a few lines for logs and test failures.
func (p *Plan) String() string {
	if p.Skip != "" {
		return "skip: " + p.Skip
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	s := &p.Status
	line("status: active=%d ready=%d terminating=%d succeeded=%d failed=%d%s%s",
		s.Active, deref(s.Ready), deref(s.Terminating), s.Succeeded, s.Failed, indexesText(s), changedText(p.StatusChanged))
	if len(p.Adopt) > 0 {
		line("adopt %d: %s", len(p.Adopt), actionsText(p.Adopt))
	}
	if len(p.Release) > 0 {
		line("release %d: %s", len(p.Release), actionsText(p.Release))
	}
	if p.RecordStatus != nil {
		u := p.RecordStatus.UncountedTerminatedPods
		ns, nf := 0, 0
		if u != nil {
			ns, nf = len(u.Succeeded), len(u.Failed)
		}
		line("record first: uncounted succeeded=%d failed=%d%s", ns, nf, indexesText(p.RecordStatus))
	}
	if len(p.RemoveFinalizers) > 0 {
		line("remove finalizer %d: %s", len(p.RemoveFinalizers), actionsText(p.RemoveFinalizers))
	}
	if len(p.Delete) > 0 {
		parts := make([]string, 0, min(len(p.Delete), 3))
		for i, d := range p.Delete {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(p.Delete)-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", d.Pod.Name, d.Reason))
		}
		line("delete %d: %s", len(p.Delete), strings.Join(parts, ", "))
	}
	if len(p.Create) > 0 {
		parts := make([]string, 0, min(len(p.Create), 3))
		for i, c := range p.Create {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", len(p.Create)-3))
				break
			}
			if c.Index >= 0 {
				parts = append(parts, fmt.Sprintf("index %d (%s)", c.Index, c.Reason))
			} else {
				parts = append(parts, c.Reason)
			}
		}
		line("create %d: %s", len(p.Create), strings.Join(parts, ", "))
	}
	for _, c := range p.Conditions {
		line("condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	if p.RequeueAfter > 0 {
		line("requeue after %s: %s", p.RequeueAfter, p.RequeueReason)
	}
	for _, w := range p.Warnings {
		line("warning: %s", w)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func actionsText(as []PodAction) string {
	parts := make([]string, 0, min(len(as), 3))
	for i, a := range as {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(as)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", a.Pod.Name, a.Reason))
	}
	return strings.Join(parts, ", ")
}

func indexesText(s *batchv1.JobStatus) string {
	out := ""
	if s.CompletedIndexes != "" {
		out += fmt.Sprintf(" completedIndexes=%q", s.CompletedIndexes)
	}
	if s.FailedIndexes != nil {
		out += fmt.Sprintf(" failedIndexes=%q", *s.FailedIndexes)
	}
	return out
}

func changedText(changed bool) string {
	if changed {
		return " (changed)"
	}
	return ""
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
