package finalizers

import (
	"errors"
	"math"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plain/ledger"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var validOutcomes = []string{"Succeeded", "SucceededIndex", "Failed", "NotCounted"}

// FinishedPod is a pod whose tracking finalizer the caller has decided may be
// removed in this sync, with how it counts. Deciding it (phase, deletion, pod failure
// policy, delayed removal under backoffLimitPerIndex, the index) is the caller's
// classification; this package only keeps the books.
type FinishedPod struct {
	// Pod is the pod, as listed (it is not modified).
	Pod *corev1.Pod
	// Outcome says how the pod counts ([ledger.Succeeded], [ledger.SucceededIndex],
	// [ledger.Failed] or [ledger.NotCounted]). The zero Outcome is invalid, so a
	// FinishedPod whose Outcome was forgotten is reported instead of counted.
	Outcome ledger.Outcome
	// Index is the completion index; read only when Outcome is ledger.SucceededIndex.
	Index int
}

// Recording is the result of [Record].
type Recording struct {
	// Uncounted is the new value of status.uncountedTerminatedPods: the input lists,
	// cleaned of duplicates, followed by the new UIDs. Its slices are new; they share
	// nothing with the input.
	Uncounted batchv1.UncountedTerminatedPods
	// NewSucceeded and NewFailed are the UIDs this call added to Uncounted, in the
	// order of the input.
	NewSucceeded, NewFailed []types.UID
	// NewSucceededIndexes are the indexes of SucceededIndex pods, ascending and
	// without duplicates, to merge into status.completedIndexes (a union, so an index
	// already there does no harm).
	NewSucceededIndexes []int
	// RemoveFinalizer are the pods whose finalizer may be removed once Uncounted and
	// NewSucceededIndexes are written to the Job status: newly recorded pods, pods
	// that were already recorded, and NotCounted pods, in the order of the input.
	RemoveFinalizer []*corev1.Pod
	// LimitReached is true when at least one pod was left out because the limit was
	// reached. It will be recorded in a later sync; the Job must not finish in this
	// one.
	LimitReached bool
	// Changed is true when Uncounted differs from the input or NewSucceededIndexes is
	// not empty: the status must be written before any finalizer is removed.
	Changed bool
}

// Record enters finished pods in the uncountedTerminatedPods ledger: the first step
// of the crash-safe order described in the package documentation. name is the
// tracking finalizer (owner.Kind.Finalizer; [Name] for batch/v1 Jobs).
//
// uncounted is the Job's status.uncountedTerminatedPods (nil means empty; it is not
// modified), preferably already settled by [Settle] in this sync so that the limit
// is spent on pods that need it. pendingRemoval holds the UIDs whose finalizer
// removal the API server has accepted but the pod list may not show yet; those pods
// are skipped. Pods without the tracking finalizer are skipped too: an earlier sync
// handled them.
//
// Pods are taken in the given order. A pod needs a new entry when it is Succeeded or
// Failed and its UID is in neither uncounted list, or when it is SucceededIndex with
// an index not seen before in this call (a UID already in either list is never added
// again, so no pod is ever in both lists). Entries are admitted while
// len(Uncounted.Succeeded)+len(Uncounted.Failed)+len(NewSucceededIndexes) < limit
// (limit <= 0 means 500, the Job controller's cap); a pod that would exceed it is
// left out, with its finalizer, and LimitReached is set. Pods that need no new entry
// (already recorded, NotCounted, a repeated index) are never left out, so a full
// ledger still drains.
//
// Bad input is skipped and reported in the returned error (a
// k8s.io/apimachinery/pkg/util/validation/field aggregate naming the field and the
// value), and the Recording holds the rest: a nil pod, a pod without UID or with a
// UID seen earlier in finished, an unknown Outcome, a negative Index with
// SucceededIndex (all of these keep their finalizer), and, in uncounted, a UID
// listed twice (kept once) or in both lists (kept once, in failed, as upstream
// prefers the failed list when it walks pods).
//
// Cost: O(len(finished) + len(uncounted lists)) time and one map of that size, plus
// sorting the new indexes.
func Record(name string, uncounted *batchv1.UncountedTerminatedPods, finished []FinishedPod, pendingRemoval sets.Set[types.UID], limit int) (Recording, error) {
	var nilPods []int
	// Pods without the finalizer are skipped (an earlier sync handled them), so
	// plain entry j is finished[at(j)]: pos is nil while nothing was skipped.
	plain := make([]ledger.Finished[types.UID], 0, len(finished))
	var pos []int
	for i := range finished {
		fp := &finished[i]
		switch {
		case fp.Pod == nil:
			nilPods = append(nilPods, i)
		case owner.Kind{Finalizer: name}.HasFinalizer(fp.Pod):
			if pos != nil {
				pos = append(pos, i)
			}
			plain = append(plain, ledger.Finished[types.UID]{UID: fp.Pod.UID, Outcome: fp.Outcome, Index: fp.Index})
			continue
		}
		if pos == nil {
			pos = make([]int, len(plain), len(finished))
			for j := range pos {
				pos[j] = j
			}
		}
	}
	at := func(j int) int {
		if pos == nil {
			return j
		}
		return pos[j]
	}
	var pending func(types.UID) bool
	if len(pendingRemoval) > 0 {
		pending = pendingRemoval.Has
	}
	pr, err := ledger.Record(plainUncounted(uncounted), plain, pending, limit)
	errs := appendLedgerErrors(nil, err, func(j int) *corev1.Pod { return finished[at(j)].Pod }, at, nilPods)

	r := Recording{
		Uncounted:           kubeUncounted(pr.Uncounted),
		NewSucceeded:        pr.NewSucceeded,
		NewFailed:           pr.NewFailed,
		NewSucceededIndexes: pr.NewSucceededIndexes,
		LimitReached:        pr.LimitReached,
		Changed:             pr.Changed,
	}
	if len(pr.Release) > 0 {
		r.RemoveFinalizer = make([]*corev1.Pod, len(pr.Release))
		for k, j := range pr.Release {
			r.RemoveFinalizer[k] = finished[at(j)].Pod
		}
	}
	return r, errs.ToAggregate()
}

// Settlement is the result of [Settle].
type Settlement struct {
	// Uncounted is the new value of status.uncountedTerminatedPods: the UIDs whose
	// pods still carry the tracking finalizer. Its slices are new.
	Uncounted batchv1.UncountedTerminatedPods
	// Succeeded and Failed are the amounts to add to status.succeeded and
	// status.failed: the lengths of SucceededUIDs and FailedUIDs.
	Succeeded, Failed int32
	// SucceededUIDs and FailedUIDs are the UIDs that left the uncounted lists and are
	// counted now, in list order.
	SucceededUIDs, FailedUIDs []types.UID
	// Changed is true when the status must be written: some UID was counted, or the
	// input lists had duplicates that were dropped.
	Changed bool
}

// Settle moves out of the uncountedTerminatedPods ledger, into the counters, every
// UID whose pod no longer carries the tracking finalizer name (owner.Kind.Finalizer;
// [Name] for batch/v1 Jobs): the last step of the crash-safe order described in the
// package documentation.
//
// pods is the current list of the Job's pods. A UID counts now when no pod in pods
// has it, when its pod lacks the finalizer, or when it is in removed: the UIDs whose
// finalizer removal the API server has accepted (in this sync, or earlier and still
// pending in the pod list). Put only accepted removals in removed: a UID counted
// while its pod still has the finalizer would be counted again if the removal never
// happened and the pod were recorded anew.
//
// Bad entries of uncounted are reported in the returned error and repaired in the
// Settlement as [Record] does: a UID listed twice is kept once, a UID in both lists
// is kept in failed only.
//
// Cost: O(len(pods) + len(uncounted lists)) time, one map of the size of the lists;
// it returns at once, without allocating, when there is nothing uncounted.
func Settle(name string, uncounted *batchv1.UncountedTerminatedPods, pods []*corev1.Pod, removed sets.Set[types.UID]) (Settlement, error) {
	var s Settlement
	if uncounted == nil || len(uncounted.Succeeded)+len(uncounted.Failed) == 0 {
		return s, nil
	}
	held := func(yield func(types.UID) bool) {
		for _, p := range pods {
			// The finalizer first: in a big Job most pods lost it long ago.
			if p != nil && (owner.Kind{Finalizer: name}).HasFinalizer(p) && p.UID != "" && !yield(p.UID) {
				return
			}
		}
	}
	var isRemoved func(types.UID) bool
	if len(removed) > 0 {
		isRemoved = removed.Has
	}
	ps, err := ledger.Settle(plainUncounted(uncounted), held, isRemoved)
	s.Uncounted = kubeUncounted(ps.Uncounted)
	s.SucceededUIDs, s.FailedUIDs = ps.SucceededUIDs, ps.FailedUIDs
	s.Succeeded, s.Failed = int32(ps.Succeeded), int32(ps.Failed)
	s.Changed = ps.Changed
	return s, appendLedgerErrors(nil, err, nil, nil, nil).ToAggregate()
}

// ApplyTo writes the settlement into status: UncountedTerminatedPods becomes a
// non-nil pointer to s.Uncounted, and Succeeded and Failed grow by s.Succeeded and
// s.Failed, saturating at math.MaxInt32 so they never wrap around. It MUTATES status.
func (s Settlement) ApplyTo(status *batchv1.JobStatus) {
	u := s.Uncounted
	status.UncountedTerminatedPods = &u
	status.Succeeded, status.Failed = ledger.Settlement[types.UID]{Succeeded: int(s.Succeeded), Failed: int(s.Failed)}.AddTo(status.Succeeded, status.Failed)
}

var (
	uncountedPath = field.NewPath("status", "uncountedTerminatedPods")
	finishedPath  = field.NewPath("finished")
)

func plainUncounted(u *batchv1.UncountedTerminatedPods) ledger.Uncounted[types.UID] {
	if u == nil {
		return ledger.Uncounted[types.UID]{}
	}
	return ledger.Uncounted[types.UID]{Succeeded: u.Succeeded, Failed: u.Failed}
}

func kubeUncounted(u ledger.Uncounted[types.UID]) batchv1.UncountedTerminatedPods {
	return batchv1.UncountedTerminatedPods{Succeeded: u.Succeeded, Failed: u.Failed}
}

// appendLedgerErrors appends the entries of a ledger error as field errors with
// the paths and messages of this package, in input order. pod(j) and pos(j) give
// the pod and the input position of entry j of the plain finished list, and nilPods
// the positions of nil pods, which the plain list leaves out (all nil for Settle,
// which has no finished list).
func appendLedgerErrors(errs field.ErrorList, err error, pod func(int) *corev1.Pod, pos func(int) int, nilPods []int) field.ErrorList {
	nilPodsBefore := func(limit int) {
		for len(nilPods) > 0 && nilPods[0] < limit {
			errs = append(errs, field.Required(finishedPath.Index(nilPods[0]).Child("pod"), "a finished pod must not be nil"))
			nilPods = nilPods[1:]
		}
	}
	var les ledger.Errors
	errors.As(err, &les)
	for _, e := range les {
		switch e.List {
		case ledger.ListFailed, ledger.ListSucceeded:
			list := "failed"
			if e.List == ledger.ListSucceeded {
				list = "succeeded"
			}
			path := uncountedPath.Child(list).Index(e.Pos)
			if e.Problem == ledger.ProblemInBothLists {
				errs = append(errs, field.Invalid(path, types.UID(e.UID), "also listed in failed; kept once, as failed"))
			} else {
				errs = append(errs, field.Duplicate(path, types.UID(e.UID)))
			}
		case ledger.ListFinished:
			nilPodsBefore(pos(e.Pos))
			p, path := pod(e.Pos), finishedPath.Index(pos(e.Pos))
			switch e.Problem {
			case ledger.ProblemNoUID:
				errs = append(errs, field.Required(path.Child("pod", "metadata", "uid"),
					"pod "+podKey(p)+" has no UID; it is not recorded and keeps its finalizer"))
			case ledger.ProblemDuplicate:
				errs = append(errs, field.Duplicate(path.Child("pod", "metadata", "uid"), types.UID(e.UID)))
			case ledger.ProblemNegativeIndex:
				errs = append(errs, field.Invalid(path.Child("index"), e.Index,
					"must be >= 0 for pod "+podKey(p)+" with outcome SucceededIndex"))
			case ledger.ProblemUnknownOutcome:
				errs = append(errs, field.NotSupported(path.Child("outcome"), e.Outcome, validOutcomes))
			}
		}
	}
	nilPodsBefore(math.MaxInt)
	return errs
}

func podKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}
