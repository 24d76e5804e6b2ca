package plan

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
)

// decideVerdict finds whether the Job fails, or has already been decided to succeed
// or fail, in upstream's order, before the indexes are looked at: an existing
// SuccessCriteriaMet or FailureTarget, a FailJob rule, the backoff limit, the active
// deadline. Otherwise it may ask for a requeue at the deadline. st is only read.
func decideVerdict(e *env, cl classified, st *batchv1.JobStatus) (*verdict, requeue) {
	var rq requeue
	conds := st.Conditions
	if cond := jobstatus.FindCondition(conds, batchv1.JobSuccessCriteriaMet); cond != nil && cond.Status == corev1.ConditionTrue {
		return &verdict{success: true, reason: cond.Reason, message: cond.Message, existing: true}, rq
	}
	if cond := jobstatus.FindCondition(conds, batchv1.JobFailureTarget); cond != nil && cond.Status == corev1.ConditionTrue {
		return &verdict{reason: cond.Reason, message: cond.Message, existing: true}, rq
	}
	if msg, ok := failJobMessage(e.spec.failurePolicy, cl.pods); ok {
		return &verdict{reason: batchv1.JobReasonPodFailurePolicy, message: msg}, rq
	}
	switch {
	case cl.failed > e.spec.backoffLimit || pastBackoffLimitOnFailure(e.spec, cl.restarts):
		return &verdict{reason: batchv1.JobReasonBackoffLimitExceeded, message: message(e.owner, msgBackoffLimitExceeded)}, rq
	case pastDeadline(e, st):
		return &verdict{reason: batchv1.JobReasonDeadlineExceeded, message: message(e.owner, msgDeadlineExceeded)}, rq
	case e.spec.deadline != nil && !e.spec.suspended && st.StartTime != nil:
		left := st.StartTime.Add(time.Duration(*e.spec.deadline) * time.Second).Sub(e.now)
		rq.at(left, "active deadline")
	}
	return nil, rq
}

// failJobMessage finds a failed pod matched by a FailJob rule.
func failJobMessage(fp *batchv1.PodFailurePolicy, pods []podInfo) (string, bool) {
	if fp == nil {
		return "", false
	}
	for i := range pods {
		pi := &pods[i]
		if !pi.failed {
			continue
		}
		if m := policyMatch(fp, pi); m.Matched && m.Action == batchv1.PodFailurePolicyActionFailJob {
			return m.Message, true
		}
	}
	return "", false
}

// pastBackoffLimitOnFailure compares restarts, the container restarts of the
// pending and running pods, with the backoff limit when the template restarts
// containers in place (restartPolicy OnFailure).
func pastBackoffLimitOnFailure(sp spec, restarts int64) bool {
	if !sp.onFailure {
		return false
	}
	if sp.backoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= int64(sp.backoffLimit)
}

func pastDeadline(e *env, st *batchv1.JobStatus) bool {
	if e.spec.deadline == nil || st.StartTime == nil || e.spec.suspended {
		return false
	}
	return e.now.Sub(st.StartTime.Time) >= time.Duration(*e.spec.deadline)*time.Second
}

// completionsReached says whether the Job succeeds by its completions, once the
// plan's creations and deletions are counted in counts.
func completionsReached(sp spec, succeeded int32, counts podCounts) bool {
	if counts.active != 0 {
		return false
	}
	if sp.completions == nil {
		return succeeded > 0
	}
	return succeeded >= *sp.completions
}

// conditionChanges are the condition changes and events of a phase.
type conditionChanges struct {
	changes []ConditionChange
	events  []Event
}

// set sets a condition in st and records the change; it MUTATES st.
func (cc *conditionChanges) set(st *batchv1.JobStatus, c ConditionChange, now time.Time) bool {
	var changed bool
	st.Conditions, changed = jobstatus.SetCondition(st.Conditions, jobstatus.NewCondition(c.Type, c.Status, c.Reason, c.Message), now)
	if changed {
		cc.changes = append(cc.changes, c)
	}
	return changed
}

// suspendConditions maintains the Suspended condition and startTime. It MUTATES st.
func suspendConditions(e *env, st *batchv1.JobStatus) conditionChanges {
	var cc conditionChanges
	if e.spec.suspended {
		msg := message(e.owner, msgSuspended)
		if cc.set(st, ConditionChange{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: reasonSuspended, Message: msg}, e.now) {
			cc.events = append(cc.events, Event{Type: corev1.EventTypeNormal, Reason: "Suspended", Message: msg})
			// Kubernetes 1.36+ (MutableSchedulingDirectivesForSuspendedJobs): a
			// suspended Job has no start time; resuming sets a new one.
			st.StartTime = nil
		}
		return cc
	}
	msg := message(e.owner, msgResumed)
	if cc.set(st, ConditionChange{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: reasonResumed, Message: msg}, e.now) {
		cc.events = append(cc.events, Event{Type: corev1.EventTypeNormal, Reason: "Resumed", Message: msg})
		st.StartTime = ptr.To(metav1.NewTime(e.now))
	}
	return cc
}
