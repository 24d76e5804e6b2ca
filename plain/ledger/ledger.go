package ledger

import (
	"iter"
	"math"
	"slices"
	"strconv"
)

// maxUncounted is the default cap on the number of entries one [Record] leaves in
// the uncounted lists plus the new succeeded indexes it returns. The Job controller
// chose it to keep the two UID lists of a Job status roughly below 20 KB, and to
// bound the releases of one sync so that a big job does not starve the others.
const maxUncounted = 500

// Outcome says how a finished pod is counted.
type Outcome int

// The outcomes of a finished pod. The zero Outcome is invalid, so a Finished entry
// whose Outcome was forgotten is reported instead of counted.
const (
	// Succeeded: a pod of a non-indexed job that succeeded. Its UID goes to
	// Uncounted.Succeeded.
	Succeeded Outcome = iota + 1
	// SucceededIndex: a pod of an indexed job that succeeded with a valid index not
	// yet completed. Finished.Index goes to Recording.NewSucceededIndexes; no UID is
	// recorded, since the index alone prevents counting it twice.
	SucceededIndex
	// Failed: a pod that failed (or must be considered failed) and counts. Its UID
	// goes to Uncounted.Failed.
	Failed
	// NotCounted: a finished pod that counts nowhere but is still released: a
	// failure ignored by the failure policy, a pod without a valid index, or a
	// succeeded pod whose index is already completed.
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

// Uncounted is the ledger: the UIDs of finished pods that are recorded but not yet
// in the counters, because their pods are still held (for Kubernetes: they still
// carry the tracking finalizer; status.uncountedTerminatedPods). ID is the type of
// the UIDs: string for a scheduler, types.UID in package
// github.com/jobkit/jobkit/finalizers, which so passes the Job status's lists as
// they are.
type Uncounted[ID ~string] struct {
	// Succeeded and Failed are the recorded UIDs by outcome. A UID is in at most
	// one list, once.
	Succeeded, Failed []ID
}

// Finished is a pod, still held, that the caller has decided may be released in
// this sync, with how it counts. Deciding it (phase, deletion, failure policy, the
// index) is the caller's classification; this package only keeps the books.
type Finished[ID ~string] struct {
	// UID identifies the pod; required.
	UID ID
	// Outcome says how the pod counts.
	Outcome Outcome
	// Index is the completion index; read only when Outcome is SucceededIndex.
	Index int
}

// Recording is the result of [Record].
type Recording[ID ~string] struct {
	// Uncounted is the new ledger: the input lists, cleaned of duplicates,
	// followed by the new UIDs. Its slices are new; they share nothing with the
	// input.
	Uncounted Uncounted[ID]
	// NewSucceeded and NewFailed are the UIDs this call added to Uncounted, in the
	// order of the input (the tails of Uncounted's lists).
	NewSucceeded, NewFailed []ID
	// NewSucceededIndexes are the indexes of SucceededIndex pods, ascending and
	// without duplicates, to merge into the completed indexes (a union, so an
	// index already there does no harm).
	NewSucceededIndexes []int
	// Release are the positions in the finished input of the pods that may be
	// released (their finalizer removed) once Uncounted and NewSucceededIndexes
	// are stored durably: newly recorded pods, pods already recorded, and
	// NotCounted pods, ascending.
	Release []int
	// LimitReached is true when at least one pod was left out because the limit
	// was reached. It will be recorded in a later sync; the job must not finish
	// in this one.
	LimitReached bool
	// Changed is true when Uncounted differs from the input or
	// NewSucceededIndexes is not empty: the ledger must be stored before any pod
	// is released.
	Changed bool
}

// Record enters finished pods in the ledger: the first step of the crash-safe
// order described in the package documentation.
//
// uncounted is the ledger as stored (it is not modified), preferably already
// settled by [Settle] in this sync so that the limit is spent on pods that need
// it. pending reports the UIDs whose release was accepted but may not show yet in
// the caller's view; those entries are skipped. A nil pending skips none.
//
// Entries are taken in the given order. One needs a new ledger entry when it is
// Succeeded or Failed and its UID is in neither list, or when it is
// SucceededIndex with an index not seen before in this call (a UID already in
// either list is never added again, so no UID is ever in both lists). Entries are
// admitted while len(Uncounted.Succeeded)+len(Uncounted.Failed)+
// len(NewSucceededIndexes) < limit (limit <= 0 means 500, the Job controller's cap,
// which keeps the two UID lists of a Job status roughly below 20 KB); one that would
// exceed it is left out, still held, and LimitReached is set. Entries that need no
// new ledger entry (already recorded, NotCounted, a repeated index) are never left
// out, so a full ledger still drains.
//
// Bad input is skipped and reported in the returned error, an [Errors] list of
// [*EntryError] naming the list, the position and the value; the Recording holds
// the rest: in finished, an empty UID, a UID seen earlier, an unknown Outcome, a
// negative Index with SucceededIndex (these stay held); in uncounted, a UID
// listed twice (kept once) or in both lists (kept once, in failed, as the Job
// controller prefers the failed list).
//
// Cost: O(len(finished) + len(uncounted lists)) time and one map of that size,
// plus sorting the new indexes.
func Record[ID ~string](uncounted Uncounted[ID], finished []Finished[ID], pending func(uid ID) bool, limit int) (Recording[ID], error) {
	if limit <= 0 {
		limit = maxUncounted
	}
	var errs Errors
	succ, fail, marks, changed := normalize(uncounted, len(finished), &errs)
	oldSucc, oldFail := len(succ), len(fail)
	entries := oldSucc + oldFail

	var r Recording[ID]
	var indexSeen map[int]struct{}
	for i := range finished {
		f := &finished[i]
		uid := f.UID
		if uid == "" {
			errs = append(errs, &EntryError{List: ListFinished, Pos: i, Problem: ProblemNoUID})
			continue
		}
		if pending != nil && pending(uid) {
			continue
		}
		m := marks[uid]
		if m&visited != 0 {
			errs = append(errs, &EntryError{List: ListFinished, Pos: i, Problem: ProblemDuplicate, UID: string(uid)})
			continue
		}
		marks[uid] = m | visited
		recorded := m&(inSucceeded|inFailed) != 0

		var needEntry bool
		switch f.Outcome {
		case Succeeded, Failed:
			needEntry = !recorded
		case SucceededIndex:
			if f.Index < 0 {
				errs = append(errs, &EntryError{List: ListFinished, Pos: i, Problem: ProblemNegativeIndex, UID: string(uid), Index: f.Index})
				continue
			}
			if !recorded {
				_, seen := indexSeen[f.Index]
				needEntry = !seen
			}
		case NotCounted:
		default:
			errs = append(errs, &EntryError{List: ListFinished, Pos: i, Problem: ProblemUnknownOutcome, UID: string(uid), Outcome: f.Outcome})
			continue
		}

		if needEntry {
			if entries >= limit {
				r.LimitReached = true
				continue
			}
			entries++
			switch f.Outcome {
			case Succeeded:
				succ = append(succ, uid)
			case Failed:
				fail = append(fail, uid)
			case SucceededIndex:
				if indexSeen == nil {
					indexSeen = make(map[int]struct{})
				}
				indexSeen[f.Index] = struct{}{}
				r.NewSucceededIndexes = append(r.NewSucceededIndexes, f.Index)
			}
		}
		r.Release = append(r.Release, i)
	}

	slices.Sort(r.NewSucceededIndexes)
	r.Uncounted = Uncounted[ID]{Succeeded: succ, Failed: fail}
	if len(succ) > oldSucc {
		r.NewSucceeded = succ[oldSucc:len(succ):len(succ)]
	}
	if len(fail) > oldFail {
		r.NewFailed = fail[oldFail:len(fail):len(fail)]
	}
	r.Changed = changed || len(r.NewSucceeded) > 0 || len(r.NewFailed) > 0 || len(r.NewSucceededIndexes) > 0
	return r, errs.err()
}

// Settlement is the result of [Settle].
type Settlement[ID ~string] struct {
	// Uncounted is the new ledger: the UIDs whose pods are still held. Its slices
	// are new.
	Uncounted Uncounted[ID]
	// Succeeded and Failed are the amounts to add to the succeeded and failed
	// counters: the lengths of SucceededUIDs and FailedUIDs.
	Succeeded, Failed int
	// SucceededUIDs and FailedUIDs are the UIDs that left the ledger and are
	// counted now, in list order.
	SucceededUIDs, FailedUIDs []ID
	// Changed is true when the ledger must be stored: some UID was counted, or
	// the input lists had duplicates that were dropped.
	Changed bool
}

// Settle moves out of the ledger, into the counters, every UID whose pod is no
// longer held: the last step of the crash-safe order described in the package
// documentation.
//
// held yields the UIDs of the pods that are still held (for Kubernetes: the job's
// pods that still carry the tracking finalizer); it may yield UIDs that are not in
// the ledger, and nil yields none. A ledger UID counts now when held does not
// yield it, or when removed reports it: the UIDs whose release was accepted (in
// this sync, or earlier and not yet visible in held). A nil removed reports none.
// Report only accepted releases: a UID counted while its pod is still held would
// be counted again if the release never happened and the pod were recorded anew.
//
// Bad entries of uncounted are reported in the returned error and repaired in the
// Settlement as [Record] does: a UID listed twice is kept once, a UID in both
// lists is kept in failed only.
//
// Cost: O(len(held) + len(uncounted lists)) time and one map of the size of the
// lists; it returns at once, without allocating or calling held, when the ledger
// is empty.
func Settle[ID ~string](uncounted Uncounted[ID], held iter.Seq[ID], removed func(uid ID) bool) (Settlement[ID], error) {
	var s Settlement[ID]
	if len(uncounted.Succeeded)+len(uncounted.Failed) == 0 {
		return s, nil
	}
	var errs Errors
	succ, fail, marks, changed := normalize(uncounted, 0, &errs)
	if held != nil {
		for uid := range held {
			if m, ok := marks[uid]; ok && (removed == nil || !removed(uid)) {
				marks[uid] = m | visited
			}
		}
	}
	s.Uncounted.Succeeded, s.SucceededUIDs = split(succ, marks)
	s.Uncounted.Failed, s.FailedUIDs = split(fail, marks)
	s.Succeeded = len(s.SucceededUIDs)
	s.Failed = len(s.FailedUIDs)
	s.Changed = changed || s.Succeeded > 0 || s.Failed > 0
	return s, errs.err()
}

// AddTo returns the counters succeeded and failed grown by the settlement,
// saturating at math.MaxInt32 (the width of a Job's status counters) so that they
// never wrap around and never go backwards.
func (s Settlement[ID]) AddTo(succeeded, failed int32) (int32, int32) {
	return addSat(succeeded, s.Succeeded), addSat(failed, s.Failed)
}

func addSat(a int32, b int) int32 {
	if b <= 0 {
		return a
	}
	if sum := int64(a) + int64(b); b < math.MaxInt32 && sum <= math.MaxInt32 {
		return int32(sum)
	}
	return math.MaxInt32
}

// split partitions uids into those marked visited (the pod is still held) and
// the rest.
func split[ID ~string](uids []ID, marks map[ID]uint8) (keep, counted []ID) {
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
	// visited: in Record, the UID was met in finished; in Settle, its pod is
	// still held.
	visited
)

// normalize copies the uncounted lists without duplicates, keeping a UID listed in
// both in failed only, and marks every kept UID with the list it is in. changed
// reports whether anything was dropped. extra sizes the map for more UIDs to come.
func normalize[ID ~string](u Uncounted[ID], extra int, errs *Errors) (succ, fail []ID, marks map[ID]uint8, changed bool) {
	marks = make(map[ID]uint8, len(u.Succeeded)+len(u.Failed)+extra)
	if len(u.Failed) > 0 {
		fail = make([]ID, 0, len(u.Failed))
	}
	for i, uid := range u.Failed {
		if _, dup := marks[uid]; dup {
			*errs = append(*errs, &EntryError{List: ListFailed, Pos: i, Problem: ProblemDuplicate, UID: string(uid)})
			changed = true
			continue
		}
		marks[uid] = inFailed
		fail = append(fail, uid)
	}
	if len(u.Succeeded) > 0 {
		succ = make([]ID, 0, len(u.Succeeded))
	}
	for i, uid := range u.Succeeded {
		switch marks[uid] {
		case inFailed:
			*errs = append(*errs, &EntryError{List: ListSucceeded, Pos: i, Problem: ProblemInBothLists, UID: string(uid)})
			changed = true
			continue
		case inSucceeded:
			*errs = append(*errs, &EntryError{List: ListSucceeded, Pos: i, Problem: ProblemDuplicate, UID: string(uid)})
			changed = true
			continue
		}
		marks[uid] = inSucceeded
		succ = append(succ, uid)
	}
	return succ, fail, marks, changed
}
