package jobstatus

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsConditionTrue reports whether conds holds a condition of type t with status True.
func IsConditionTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for i := range conds {
		if conds[i].Type == t && conds[i].Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// FindCondition returns the condition of type t, or nil. The pointer aliases conds.
func FindCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// Finished returns the terminal condition type of a job (Complete or Failed) and true,
// or "" and false while the job is not finished. The interim conditions
// (SuccessCriteriaMet, FailureTarget) do not finish a job.
func Finished(status *batchv1.JobStatus) (batchv1.JobConditionType, bool) {
	for _, c := range status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, true
		}
	}
	return "", false
}

// IsFinished reports whether the job has a Complete=True or Failed=True condition.
//
// Deprecated: use Finished, the one home of the answer (its second result); removed
// in the next release.
func IsFinished(status *batchv1.JobStatus) bool {
	_, ok := Finished(status)
	return ok
}

// SetCondition returns conds with the condition of type c.Type set to c's status,
// reason and message, and whether anything changed. It does not modify conds: when
// something changes the result is a new slice.
//
// The rules are the API conventions the Job controller follows:
//   - an absent condition is appended only when its status is True (a False condition
//     that never existed is not written);
//   - a status change sets lastTransitionTime and lastProbeTime to now;
//   - a change of reason or message alone keeps lastTransitionTime and sets
//     lastProbeTime to now;
//   - nothing else changes anything (so repeated syncs write nothing).
func SetCondition(conds []batchv1.JobCondition, c batchv1.JobCondition, now time.Time) ([]batchv1.JobCondition, bool) {
	t := metav1.NewTime(now)
	for i := range conds {
		if conds[i].Type != c.Type {
			continue
		}
		old := conds[i]
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return conds, false
		}
		out := slices.Clone(conds)
		out[i].Reason, out[i].Message, out[i].LastProbeTime = c.Reason, c.Message, t
		if old.Status != c.Status {
			out[i].Status = c.Status
			out[i].LastTransitionTime = t
		}
		return out, true
	}
	if c.Status != corev1.ConditionTrue {
		return conds, false
	}
	c.LastProbeTime, c.LastTransitionTime = t, t
	out := make([]batchv1.JobCondition, len(conds), len(conds)+1)
	copy(out, conds)
	return append(out, c), true
}

// NewCondition builds a condition with status True (or the given status) and the
// given reason and message; the times are left for SetCondition to fill in.
func NewCondition(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: message}
}
