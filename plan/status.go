package plan

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// startStatus is the status the phases build on: a copy of the owner's, with a
// non-nil uncountedTerminatedPods and, for an owner that runs, a start time.
func startStatus(w *Workload, sp spec, now time.Time) *batchv1.JobStatus {
	st := w.Status.DeepCopy()
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if st.StartTime == nil && !sp.suspended {
		st.StartTime = ptr.To(metav1.NewTime(now))
	}
	return st
}

// statusInput is what assembleStatus reads beyond the env.
type statusInput struct {
	tracked      []*podInfo // the Job's tracked pods (classified.tracked)
	counts       podCounts  // once the plan's deletions and creations are done
	verdict      *verdict
	limitReached bool
}

// assembleStatus completes the plan p with the statuses: the pod counts and the
// interim condition go into st (which it MUTATES), then RecordStatus, the Settlement
// and the status Settle yields when every removal succeeds, with the terminal
// condition when the Job finishes. It reads p.RemoveFinalizers and appends to
// p.Conditions.
func assembleStatus(e *env, in statusInput, st *batchv1.JobStatus, p *Plan) {
	st.Active = in.counts.active
	st.Ready = ptr.To(in.counts.ready)
	st.Terminating = ptr.To(in.counts.terminating)
	var final *batchv1.JobCondition
	if v := in.verdict; v != nil {
		interim, last := batchv1.JobFailureTarget, batchv1.JobFailed
		if v.success {
			interim, last = batchv1.JobSuccessCriteriaMet, batchv1.JobComplete
		}
		if !v.existing {
			var cc conditionChanges
			cc.set(st, ConditionChange{Type: interim, Status: corev1.ConditionTrue, Reason: v.reason, Message: v.message}, e.now)
			p.Conditions = append(p.Conditions, cc.changes...)
		}
		final = &batchv1.JobCondition{Type: last, Status: corev1.ConditionTrue, Reason: v.reason, Message: v.message}
	}
	original := &e.wl.Status
	p.Settlement = Settlement{
		Base:        *st,
		Previous:    *original,
		Held:        heldUIDs(st.UncountedTerminatedPods, mayBeHeld(e, in), e.pending),
		Removing:    removingUIDs(p.RemoveFinalizers, e.pending),
		Finish:      final,
		CanFinish:   e.synced && in.counts.active == 0 && !in.limitReached,
		Terminating: in.counts.terminating,
		Completions: e.spec.completions,
		Now:         e.now,
		Owner:       e.owner,

		DeferPodCounts: !e.synced,
	}
	if len(p.RemoveFinalizers) > 0 && !equality.Semantic.DeepEqual(st, original) {
		p.RecordStatus = st.DeepCopy()
		p.Settlement.Previous = *st
	}
	removed := make(sets.Set[types.UID], len(p.RemoveFinalizers))
	for _, a := range p.RemoveFinalizers {
		removed.Insert(a.Pod.UID)
	}
	s := p.Settle(removed)
	p.Status = s.Status
	p.StatusChanged = !equality.Semantic.DeepEqual(&s.Status, original) &&
		!(p.Settlement.DeferPodCounts && onlyPodCountsDiffer(&s.Status, original))
	if s.Finished != nil {
		p.Conditions = append(p.Conditions, ConditionChange{Type: s.Finished.Type, Status: s.Finished.Status, Reason: s.Finished.Reason, Message: s.Finished.Message})
	}
}

// planFinished handles a Job that already has Complete or Failed: its pods only lose
// their finalizers (upstream leaves this to the orphan worker).
func planFinished(in Input, w *Workload) *Plan {
	p := &Plan{Status: *w.Status.DeepCopy()}
	for _, pod := range in.Pods {
		if pod == nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		if ref != nil && ref.UID == w.UID && in.kind().HasFinalizer(pod) && !in.PendingFinalizerRemovals.Has(pod.UID) {
			p.RemoveFinalizers = append(p.RemoveFinalizers, PodAction{Pod: pod, Reason: noun(in.kind()) + " finished"})
		}
	}
	if len(p.RemoveFinalizers) == 0 {
		return &Plan{Skip: noun(in.kind()) + " finished"}
	}
	p.Settlement = Settlement{
		Base:     p.Status,
		Previous: w.Status,
		Held:     heldUIDs(p.Status.UncountedTerminatedPods, carryingFinalizer(in.Pods, in.kind()), in.PendingFinalizerRemovals),
		Removing: removingUIDs(p.RemoveFinalizers, in.PendingFinalizerRemovals),
		Now:      in.Now,
		Owner:    in.kind(),
	}
	return p
}
