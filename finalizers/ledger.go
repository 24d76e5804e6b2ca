package finalizers

import (
	"math"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxUncounted is the default cap on the number of entries one [Record] leaves in
// status.uncountedTerminatedPods plus the new succeeded indexes it returns. Upstream
// chose it to keep the two UID lists roughly below 20 KB, and to bound the finalizer
// removals of one sync so that a big Job does not starve the others.
const MaxUncounted = 500

// Outcome says how a finished pod is counted.
type Outcome int

// The outcomes of a finished pod. The zero Outcome is invalid, so a FinishedPod whose
// Outcome was forgotten is reported instead of counted.
const (
	// Succeeded: a pod of a NonIndexed Job that succeeded. Its UID goes to
	// uncountedTerminatedPods.succeeded.
	Succeeded Outcome = iota + 1
	// SucceededIndex: a pod of an Indexed Job that succeeded with a valid index below
	// completions that is not yet in status.completedIndexes. FinishedPod.Index goes
	// to Recording.NewSucceededIndexes; no UID is recorded, since the index alone
	// prevents counting it twice.
	SucceededIndex
	// Failed: a pod that failed (or must be considered failed) and counts. Its UID
	// goes to uncountedTerminatedPods.failed.
	Failed
	// NotCounted: a finished pod that counts nowhere but still loses its finalizer:
	// a failure matched by an Ignore rule of the pod failure policy, a pod of an
	// Indexed Job without a valid index or with an index at or above completions, or
	// a succeeded pod whose index is already in completedIndexes.
	NotCounted
)

var outcomeNames = [...]string{"Outcome(0)", "Succeeded", "SucceededIndex", "Failed", "NotCounted"}

// String returns the name of the outcome.
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

var validOutcomes = []string{"Succeeded", "SucceededIndex", "Failed", "NotCounted"}

// FinishedPod is a pod whose tracking finalizer the caller has decided may be
// removed in this sync, with how it counts. Deciding it (phase, deletion, pod failure
// policy, delayed removal under backoffLimitPerIndex, the index) is the caller's
// classification; this package only keeps the books.
type FinishedPod struct {
	// Pod is the pod, as listed (it is not modified).
	Pod *corev1.Pod
	// Outcome says how the pod counts.
	Outcome Outcome
	// Index is the completion index; read only when Outcome is SucceededIndex.
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
// of the crash-safe order described in the package documentation.
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
// (limit <= 0 means [MaxUncounted]); a pod that would exceed it is left out, with its
// finalizer, and LimitReached is set. Pods that need no new entry (already recorded,
// NotCounted, a repeated index) are never left out, so a full ledger still drains.
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
func Record(uncounted *batchv1.UncountedTerminatedPods, finished []FinishedPod, pendingRemoval sets.Set[types.UID], limit int) (Recording, error) {
	if limit <= 0 {
		limit = MaxUncounted
	}
	var errs field.ErrorList
	succ, fail, marks, changed := normalize(uncounted, len(finished), &errs)
	oldSucc, oldFail := len(succ), len(fail)
	entries := oldSucc + oldFail

	var r Recording
	var indexSeen map[int]struct{}
	for i := range finished {
		fp := &finished[i]
		pod := fp.Pod
		if pod == nil {
			errs = append(errs, field.Required(finishedPath.Index(i).Child("pod"), "a finished pod must not be nil"))
			continue
		}
		if !Has(pod) {
			continue
		}
		uid := pod.UID
		if uid == "" {
			errs = append(errs, field.Required(finishedPath.Index(i).Child("pod", "metadata", "uid"),
				"pod "+podKey(pod)+" has no UID; it is not recorded and keeps its finalizer"))
			continue
		}
		if pendingRemoval.Has(uid) {
			continue
		}
		m := marks[uid]
		if m&visited != 0 {
			errs = append(errs, field.Duplicate(finishedPath.Index(i).Child("pod", "metadata", "uid"), uid))
			continue
		}
		marks[uid] = m | visited
		recorded := m&(inSucceeded|inFailed) != 0

		var needEntry bool
		switch fp.Outcome {
		case Succeeded, Failed:
			needEntry = !recorded
		case SucceededIndex:
			if fp.Index < 0 {
				errs = append(errs, field.Invalid(finishedPath.Index(i).Child("index"), fp.Index,
					"must be >= 0 for pod "+podKey(pod)+" with outcome SucceededIndex"))
				continue
			}
			if !recorded {
				_, seen := indexSeen[fp.Index]
				needEntry = !seen
			}
		case NotCounted:
		default:
			errs = append(errs, field.NotSupported(finishedPath.Index(i).Child("outcome"), fp.Outcome, validOutcomes))
			continue
		}

		if needEntry {
			if entries >= limit {
				r.LimitReached = true
				continue
			}
			entries++
			switch fp.Outcome {
			case Succeeded:
				succ = append(succ, uid)
			case Failed:
				fail = append(fail, uid)
			case SucceededIndex:
				if indexSeen == nil {
					indexSeen = make(map[int]struct{})
				}
				indexSeen[fp.Index] = struct{}{}
				r.NewSucceededIndexes = append(r.NewSucceededIndexes, fp.Index)
			}
		}
		r.RemoveFinalizer = append(r.RemoveFinalizer, pod)
	}

	slices.Sort(r.NewSucceededIndexes)
	r.Uncounted = batchv1.UncountedTerminatedPods{Succeeded: succ, Failed: fail}
	if len(succ) > oldSucc {
		r.NewSucceeded = succ[oldSucc:len(succ):len(succ)]
	}
	if len(fail) > oldFail {
		r.NewFailed = fail[oldFail:len(fail):len(fail)]
	}
	r.Changed = changed || len(r.NewSucceeded) > 0 || len(r.NewFailed) > 0 || len(r.NewSucceededIndexes) > 0
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
// UID whose pod no longer carries the tracking finalizer: the last step of the
// crash-safe order described in the package documentation.
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
func Settle(uncounted *batchv1.UncountedTerminatedPods, pods []*corev1.Pod, removed sets.Set[types.UID]) (Settlement, error) {
	var s Settlement
	if uncounted == nil || len(uncounted.Succeeded)+len(uncounted.Failed) == 0 {
		return s, nil
	}
	var errs field.ErrorList
	succ, fail, marks, changed := normalize(uncounted, 0, &errs)
	for _, p := range pods {
		// Has first: in a big Job most pods lost the finalizer long ago, and this
		// spares them the map lookup.
		if !Has(p) || p.UID == "" {
			continue
		}
		if m, ok := marks[p.UID]; ok && !removed.Has(p.UID) {
			marks[p.UID] = m | visited
		}
	}
	s.Uncounted.Succeeded, s.SucceededUIDs = split(succ, marks)
	s.Uncounted.Failed, s.FailedUIDs = split(fail, marks)
	s.Succeeded = int32(len(s.SucceededUIDs))
	s.Failed = int32(len(s.FailedUIDs))
	s.Changed = changed || s.Succeeded > 0 || s.Failed > 0
	return s, errs.ToAggregate()
}

// ApplyTo writes the settlement into status: UncountedTerminatedPods becomes a
// non-nil pointer to s.Uncounted, and Succeeded and Failed grow by s.Succeeded and
// s.Failed, saturating at math.MaxInt32 so they never wrap around. It MUTATES status.
func (s Settlement) ApplyTo(status *batchv1.JobStatus) {
	u := s.Uncounted
	status.UncountedTerminatedPods = &u
	status.Succeeded = addSat(status.Succeeded, s.Succeeded)
	status.Failed = addSat(status.Failed, s.Failed)
}

func addSat(a, b int32) int32 {
	if sum := int64(a) + int64(b); sum <= math.MaxInt32 {
		return int32(sum)
	}
	return math.MaxInt32
}

// split partitions uids into those marked visited (the pod still carries the
// finalizer) and the rest.
func split(uids []types.UID, marks map[types.UID]uint8) (keep, counted []types.UID) {
	for _, uid := range uids {
		if marks[uid]&visited != 0 {
			keep = append(keep, uid)
		} else {
			counted = append(counted, uid)
		}
	}
	return keep, counted
}

// Bits of the per-UID marks.
const (
	inSucceeded uint8 = 1 << iota
	inFailed
	// visited: in Record, the UID was met in finished; in Settle, its pod still
	// carries the finalizer.
	visited
)

var (
	uncountedPath = field.NewPath("status", "uncountedTerminatedPods")
	finishedPath  = field.NewPath("finished")
)

// normalize copies the uncounted lists without duplicates, keeping a UID listed in
// both in failed only, and marks every kept UID with the list it is in. changed
// reports whether anything was dropped. extra sizes the map for more UIDs to come.
func normalize(u *batchv1.UncountedTerminatedPods, extra int, errs *field.ErrorList) (succ, fail []types.UID, marks map[types.UID]uint8, changed bool) {
	if u == nil {
		return nil, nil, make(map[types.UID]uint8, extra), false
	}
	marks = make(map[types.UID]uint8, len(u.Succeeded)+len(u.Failed)+extra)
	if len(u.Failed) > 0 {
		fail = make([]types.UID, 0, len(u.Failed))
	}
	for i, uid := range u.Failed {
		if _, dup := marks[uid]; dup {
			*errs = append(*errs, field.Duplicate(uncountedPath.Child("failed").Index(i), uid))
			changed = true
			continue
		}
		marks[uid] = inFailed
		fail = append(fail, uid)
	}
	if len(u.Succeeded) > 0 {
		succ = make([]types.UID, 0, len(u.Succeeded))
	}
	for i, uid := range u.Succeeded {
		switch marks[uid] {
		case inFailed:
			*errs = append(*errs, field.Invalid(uncountedPath.Child("succeeded").Index(i), uid,
				"also listed in failed; kept once, as failed"))
			changed = true
			continue
		case inSucceeded:
			*errs = append(*errs, field.Duplicate(uncountedPath.Child("succeeded").Index(i), uid))
			changed = true
			continue
		}
		marks[uid] = inSucceeded
		succ = append(succ, uid)
	}
	return succ, fail, marks, changed
}

func podKey(pod *corev1.Pod) string {
	return pod.Namespace + "/" + pod.Name
}
