package plan

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/internal/podutil"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
)

// ErrInvalidJob is wrapped by the errors Compute returns for a Job it cannot plan.
var ErrInvalidJob = errors.New("invalid job")

// Compute decides one sync of a Job. It is pure: it reads in, performs no I/O,
// reads no clock and modifies neither the Job nor the pods.
//
// It returns an error wrapping ErrInvalidJob for input it cannot plan (nil Job, empty
// ControllerName, an unknown completion mode, an Indexed Job without completions,
// negative counts); bad data it can work around (an unparsable completedIndexes, a
// pod with a bad index annotation) is reported in Plan.Warnings instead, with the
// valid part kept.
//
// Cost: O(n log n) in the number of pods plus the length of the status strings.
func Compute(in Input) (*Plan, error) {
	w, err := in.workload()
	if err != nil {
		return nil, err
	}
	if in.ControllerName == "" {
		return nil, fmt.Errorf("%w: ControllerName is empty: the controller must name itself (spec.managedBy)", ErrInvalidJob)
	}
	if !w.HandledBy(in.ControllerName, in.kind()) {
		return &Plan{Skip: fmt.Sprintf("spec.managedBy is %q, not %q", ptr.Deref(w.Spec.ManagedBy, batchv1.JobControllerName), in.ControllerName)}, nil
	}
	sp, err := readSpec(&w.Spec)
	if err != nil {
		return nil, err
	}
	if _, done := jobstatus.Finished(&w.Status); done {
		return planFinished(in, w), nil
	}
	// The phases, each reading what the earlier ones returned. Only st, the status
	// being built, is changed in place, by the phases that say so.
	e, claimed, st, cl := begin(in, w, sp)
	var warn warnings
	warn.add(claimed.warnings)
	backoffRecord := rebuildBackoff(cl, in.Backoff)

	v, rq := decideVerdict(e, cl, st)
	ix := indexOutcomes{succeededCount: cl.succeeded}
	if sp.indexed {
		ix = decideIndexed(e, cl, st, v)
		warn.add(ix.warnings)
		if v == nil {
			v = ix.verdict
		}
	}
	var act actions
	managed := false
	if v != nil {
		act = deleteActiveForFinish(e.owner, cl.active, v)
	} else if e.synced && !w.Deleting {
		act = manage(e, manageInput{cl: &cl, counts: cl.observed, succeeded: ix.succeededCount, backoff: backoffRecord, indexes: ix})
		warn.add(act.warnings)
		rq.earliest(act.requeue)
		managed = true
	}
	counts := cl.observed.after(act)

	var conds conditionChanges
	if v == nil {
		if completionsReached(sp, ix.succeededCount, counts) {
			v = &verdict{success: true, reason: batchv1.JobReasonCompletionsReached, message: msgCompletionsReached}
		} else if managed {
			conds = suspendConditions(e, st)
		}
	}
	led := ledger(e, ledgerInput{cl: &cl, indexes: ix, deletions: act.delete, verdict: v}, st)
	warn.add(led.warnings)

	p := &Plan{
		Adopt:                claimed.adopt,
		Release:              claimed.release,
		RemoveFinalizers:     led.removeFinalizers,
		Delete:               act.delete,
		Create:               act.create,
		Conditions:           conds.changes,
		Events:               conds.events,
		Backoff:              backoffRecord,
		RequeueAfter:         rq.after,
		RequeueReason:        rq.reason,
		FailurePolicyActions: led.failurePolicyActions,
		Warnings:             warn,
	}
	assembleStatus(e, statusInput{tracked: cl.tracked, counts: counts, verdict: v, limitReached: led.limitReached}, st, p)
	return p, nil
}

// begin runs the phases every reading of an unfinished owner starts with: the
// environment, the pods claimed (adopted, released, kept), the status being built
// and the pods classified. Compute and Workload.IndexOutcomes start here, so both
// count the same pods.
func begin(in Input, w *Workload, sp spec) (*env, claimed, *batchv1.JobStatus, classified) {
	e := &env{wl: w, spec: sp, opts: in.Options, now: in.Now, synced: in.ExpectationsSatisfied, pending: in.PendingFinalizerRemovals, taken: in.TakenPodNames, owner: in.kind(), facts: in.Facts}
	if e.pending == nil {
		e.pending = sets.New[types.UID]()
	}
	if u := w.Status.UncountedTerminatedPods; u != nil {
		e.uncountedSucceeded, e.uncountedFailed = sets.New(u.Succeeded...), sets.New(u.Failed...)
	}
	claimed := claim(e, in.Pods)
	if len(claimed.release) > 0 && sp.indexed {
		// A released pod keeps its name: the replacement of its index must not be
		// named so (the index's name sequence, which no longer sees the pod, would
		// give that name again).
		taken := sets.New[string]()
		if e.taken != nil {
			taken = e.taken.Clone()
		}
		for _, a := range claimed.release {
			taken.Insert(a.Pod.Name)
		}
		e.taken = taken
	}
	st := startStatus(w, sp, in.Now)
	return e, claimed, st, classify(e, claimed, st)
}

// HandledBy reports whether the controller named controller manages w, an owner of
// kind. An unset managedBy means the built-in controller for a batch/v1 Job, and
// whoever controls the kind for any other: a custom resource has no built-in
// controller to leave it to.
func (w *Workload) HandledBy(controller string, kind owner.Kind) bool {
	if w.Spec.ManagedBy == nil {
		return kind != owner.BatchJob || controller == batchv1.JobControllerName
	}
	return *w.Spec.ManagedBy == controller
}

// Controller returns the controller name w's spec.managedBy holds, or
// batchv1.JobControllerName when it is unset: the built-in controller for a
// batch/v1 Job (for an owner of another kind any controller of the kind handles an
// unset managedBy, see HandledBy).
func (w *Workload) Controller() string {
	if w.Spec.ManagedBy == nil {
		return batchv1.JobControllerName
	}
	return *w.Spec.ManagedBy
}

// OrphanOwner returns what the orphan decision (finalizers.OrphanDecision) reads
// of w as a live owner of kind: its UID, the controller that manages it (an
// unset managedBy is the batch/v1 Job controller's for a Job, any controller's
// of the kind otherwise, written "") and whether it has finished.
func (w *Workload) OrphanOwner(kind owner.Kind) *finalizers.OrphanOwner {
	managedBy := ""
	switch {
	case kind == owner.BatchJob:
		managedBy = w.Controller()
	case w.Spec.ManagedBy != nil:
		managedBy = *w.Spec.ManagedBy
	}
	_, done := jobstatus.Finished(&w.Status)
	return &finalizers.OrphanOwner{UID: w.UID, ManagedBy: managedBy, Finished: done}
}

// env is what every phase reads and none changes.
type env struct {
	wl      *Workload
	spec    spec
	opts    Options
	now     time.Time
	synced  bool                // Input.ExpectationsSatisfied
	pending sets.Set[types.UID] // Input.PendingFinalizerRemovals, never nil
	taken   sets.Set[string]    // Input.TakenPodNames, may be nil
	owner   owner.Kind          // Input.Owner, defaulted
	facts   *FactCache          // Input.Facts, may be nil
	// uncountedSucceeded and uncountedFailed are the UIDs of the status's
	// uncountedTerminatedPods as read (nil when it has none).
	uncountedSucceeded, uncountedFailed sets.Set[types.UID]
}

// verdict is a decision to finish the Job.
type verdict struct {
	success  bool
	reason   string
	message  string
	existing bool // the interim condition is already in the status
}

// requeue is a request for another sync; the zero value asks for none.
type requeue struct {
	after  time.Duration
	reason string
}

// at asks for a sync after d (at least a nanosecond) unless an earlier one is asked
// for already.
func (r *requeue) at(d time.Duration, why string) {
	if d <= 0 {
		d = time.Nanosecond
	}
	r.earliest(requeue{after: d, reason: why})
}

// earliest keeps the earlier of r and o; on a tie, r.
func (r *requeue) earliest(o requeue) {
	if o.after > 0 && (r.after == 0 || o.after < r.after) {
		*r = o
	}
}

// warnings collects the bad input a phase worked around, in the order met.
type warnings []string

func (w *warnings) addf(format string, args ...any) {
	*w = append(*w, fmt.Sprintf(format, args...))
}

func (w *warnings) add(more warnings) { *w = append(*w, more...) }

func durationOf(ns int64) time.Duration { return time.Duration(ns) }

// isTerminal says whether the pod has succeeded or failed.
func isTerminal(pod *corev1.Pod) bool {
	return podutil.IsTerminal(pod)
}
