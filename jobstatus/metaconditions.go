package jobstatus

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetaConditions converts a Job's conditions into metav1.Conditions, the shape a
// custom resource's status usually holds them in, with observedGeneration set to
// generation (the owner's metadata.generation the status was computed from). Type,
// status, reason, message and lastTransitionTime are kept; lastProbeTime, which
// metav1.Condition does not have and nothing in jobkit reads, is dropped. The
// result shares nothing with conds; nil gives nil.
//
// metav1.Condition requires a reason, which every condition jobkit writes has.
func MetaConditions(conds []batchv1.JobCondition, generation int64) []metav1.Condition {
	if conds == nil {
		return nil
	}
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		out[i] = metav1.Condition{
			Type:               string(c.Type),
			Status:             metav1.ConditionStatus(c.Status),
			ObservedGeneration: generation,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		}
	}
	return out
}

// JobConditions converts metav1.Conditions back into a Job's conditions: the inverse
// of MetaConditions (lastProbeTime stays zero, observedGeneration is dropped). A
// custom resource's conditions that are not the Job's (types other than Complete,
// Failed, Suspended, FailureTarget and SuccessCriteriaMet) pass through unchanged
// and are never read. The result shares nothing with conds; nil gives nil.
func JobConditions(conds []metav1.Condition) []batchv1.JobCondition {
	if conds == nil {
		return nil
	}
	out := make([]batchv1.JobCondition, len(conds))
	for i, c := range conds {
		out[i] = batchv1.JobCondition{
			Type:               batchv1.JobConditionType(c.Type),
			Status:             corev1.ConditionStatus(c.Status),
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		}
	}
	return out
}
