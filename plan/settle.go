package plan

import (
	"iter"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainledger "github.com/jobkit/jobkit/plain/ledger"
)

// Settle returns the status after the finalizer removals of step 3: the UIDs of
// removed (those whose removal the API server accepted) and the pods that no longer
// carry the finalizer move from uncountedTerminatedPods into the counters, and the
// terminal condition (Complete with completionTime, or Failed) is added once nothing
// is uncounted, every planned finalizer removal succeeded (as upstream, which does not
// finish a Job in a sync where a removal failed), no pod is active or terminating and
// expectations are satisfied.
//
// It is a pure function of p.Settlement and removed: it reads no other field of the
// plan and modifies neither. For a skipped plan it returns the zero Settled (Changed
// false).
func (p *Plan) Settle(removed sets.Set[types.UID]) Settled {
	if p.Skip != "" {
		return Settled{} // nothing to write for a Job this plan does not handle
	}
	s := &p.Settlement
	st := *s.Base.DeepCopy()
	out := Settled{}
	res := settleLedger(st.UncountedTerminatedPods, s.Held, removed)
	if st.UncountedTerminatedPods != nil || res.Changed {
		res.ApplyTo(&st)
	}
	allRemoved := true
	for _, uid := range s.Removing {
		if !removed.Has(uid) {
			allRemoved = false
			break
		}
	}
	if s.Finish != nil && s.CanFinish && allRemoved && s.Terminating == 0 &&
		len(res.Uncounted.Succeeded)+len(res.Uncounted.Failed) == 0 {
		cond := *s.Finish
		st.Conditions, _ = jobstatus.SetCondition(st.Conditions, jobstatus.NewCondition(cond.Type, cond.Status, cond.Reason, cond.Message), s.Now)
		if st.StartTime == nil {
			// A Job suspended (which clears startTime) can still fail or complete
			// with the pods it had; the API server requires a start time on a
			// finished Job and would refuse this write on every sync.
			st.StartTime = ptr.To(metav1.NewTime(s.Now))
		}
		if cond.Type == batchv1.JobComplete {
			st.CompletionTime = ptr.To(metav1.NewTime(s.Now))
			if s.Completions != nil && st.Succeeded > *s.Completions {
				out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: "TooManySucceededPods", Message: msgTooManySucceeded})
			}
			out.Events = append(out.Events, Event{Type: corev1.EventTypeNormal, Reason: "Completed", Message: message(s.kind(), msgCompleted)})
		} else {
			out.Events = append(out.Events, Event{Type: corev1.EventTypeWarning, Reason: cond.Reason, Message: cond.Message})
		}
		out.Finished = jobstatus.FindCondition(st.Conditions, cond.Type).DeepCopy()
	}
	out.Status = st
	last := &s.Previous
	out.Changed = !equality.Semantic.DeepEqual(&st, last)
	if out.Changed && s.DeferPodCounts && onlyPodCountsDiffer(&st, last) {
		out.Changed = false
	}
	return out
}

// settleLedger is finalizers.Settle over the UIDs still held instead of the pods:
// every UID of uncounted that is not in held, or is in removed, is counted.
func settleLedger(uncounted *batchv1.UncountedTerminatedPods, held []types.UID, removed sets.Set[types.UID]) finalizers.Settlement {
	if uncounted == nil || len(uncounted.Succeeded)+len(uncounted.Failed) == 0 {
		return finalizers.Settlement{}
	}
	var isRemoved func(types.UID) bool
	if len(removed) > 0 {
		isRemoved = removed.Has
	}
	// The ledger's errors (duplicates) were reported in Plan.Warnings by Compute.
	ps, _ := plainledger.Settle(plainledger.Uncounted[types.UID]{Succeeded: uncounted.Succeeded, Failed: uncounted.Failed}, slices.Values(held), isRemoved)
	return finalizers.Settlement{
		Uncounted:     batchv1.UncountedTerminatedPods{Succeeded: ps.Uncounted.Succeeded, Failed: ps.Uncounted.Failed},
		Succeeded:     int32(ps.Succeeded),
		Failed:        int32(ps.Failed),
		SucceededUIDs: ps.SucceededUIDs,
		FailedUIDs:    ps.FailedUIDs,
		Changed:       ps.Changed,
	}
}

// heldUIDs lists the UIDs of uncounted whose pods carry the tracking finalizer with
// no removal pending (Settlement.Held), in the order of the pods. carriers yields,
// in that order, the UIDs of the pods that carry the finalizer; it may leave out
// pods whose UID is surely not in uncounted. It is not called when the ledger is
// empty.
func heldUIDs(uncounted *batchv1.UncountedTerminatedPods, carriers iter.Seq[types.UID], pending sets.Set[types.UID]) []types.UID {
	if uncounted == nil || len(uncounted.Succeeded)+len(uncounted.Failed) == 0 {
		return nil
	}
	inLedger := make(sets.Set[types.UID], len(uncounted.Succeeded)+len(uncounted.Failed))
	inLedger.Insert(uncounted.Succeeded...)
	inLedger.Insert(uncounted.Failed...)
	var held []types.UID
	for uid := range carriers {
		if uid != "" && inLedger.Has(uid) && !pending.Has(uid) {
			held = append(held, uid)
		}
	}
	return held
}

// carryingFinalizer yields the UIDs of the pods that carry kind's tracking
// finalizer, for heldUIDs.
func carryingFinalizer(pods []*corev1.Pod, kind owner.Kind) iter.Seq[types.UID] {
	return func(yield func(types.UID) bool) {
		for _, p := range pods {
			// The finalizer first: in a big Job most pods lost the finalizer long ago.
			if kind.HasFinalizer(p) && !yield(p.UID) {
				return
			}
		}
	}
}

// mayBeHeld yields, for heldUIDs, the UIDs of the Job's pods that may be held once
// the plan's ledger is recorded: those carrying the finalizer with no removal
// pending that were in uncountedTerminatedPods as read, or that the ledger may have
// recorded in this sync (ledger: finished pods, or any when the Job is finishing or
// being deleted). Only their UIDs are read: in a big Job, most tracked pods are
// active and in neither.
func mayBeHeld(e *env, in statusInput) iter.Seq[types.UID] {
	all := in.verdict != nil || e.wl.Deleting
	return func(yield func(types.UID) bool) {
		for _, pi := range in.tracked {
			if (all || pi.succeeded || pi.failed || pi.inUncountedSucceeded || pi.inUncountedFailed) && !yield(pi.pod.UID) {
				return
			}
		}
	}
}

// removingUIDs lists the UIDs of actions whose removal is not already pending
// (Settlement.Removing).
func removingUIDs(actions []PodAction, pending sets.Set[types.UID]) []types.UID {
	if len(actions) == 0 {
		return nil
	}
	out := make([]types.UID, 0, len(actions))
	for _, a := range actions {
		if !pending.Has(a.Pod.UID) {
			out = append(out, a.Pod.UID)
		}
	}
	return out
}

// onlyPodCountsDiffer reports whether a and b differ only in the counts recomputed
// from the pods at every sync: active, ready and terminating, and the succeeded
// indexes of an Indexed Job (completedIndexes and succeeded; a change of the ledger
// also changes uncountedTerminatedPods, and is never only this). Such a change is
// not written while expectations are unsatisfied: the cache does not show the pods of
// the creations and deletions in flight yet, so those counts are about to change
// again, and writing them would cost a status write per sync for a value already
// wrong. (Upstream writes it; with an informer lagging by a few round trips, that is
// one extra write per sync.)
func onlyPodCountsDiffer(a, b *batchv1.JobStatus) bool {
	if a == nil || b == nil {
		return false
	}
	c := *a
	c.Active, c.Ready, c.Terminating = b.Active, b.Ready, b.Terminating
	if a.CompletedIndexes != b.CompletedIndexes {
		c.CompletedIndexes, c.Succeeded = b.CompletedIndexes, b.Succeeded
	}
	return equality.Semantic.DeepEqual(&c, b)
}
