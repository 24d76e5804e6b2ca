package v1alpha1

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// PodFailurePolicy returns the run's pod failure policy as a
// batchv1.PodFailurePolicy, or nil when it has none. The exit codes of each rule
// come out sorted, as batch/v1 requires (they are a set here, so order carries
// no meaning). The result shares nothing with tj.
func (tj *TrainingJob) PodFailurePolicy() *batchv1.PodFailurePolicy {
	p := tj.Spec.PodFailurePolicy
	if p == nil {
		return nil
	}
	out := &batchv1.PodFailurePolicy{Rules: make([]batchv1.PodFailurePolicyRule, len(p.Rules))}
	for i, r := range p.Rules {
		rule := batchv1.PodFailurePolicyRule{Action: r.Action}
		if e := r.OnExitCodes; e != nil {
			rule.OnExitCodes = &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: e.Operator,
				Values:   slices.Sorted(slices.Values(e.Values)),
			}
			if e.ContainerName != nil {
				name := *e.ContainerName
				rule.OnExitCodes.ContainerName = &name
			}
		}
		for _, c := range r.OnPodConditions {
			status := c.Status
			if status == "" {
				status = corev1.ConditionTrue
			}
			rule.OnPodConditions = append(rule.OnPodConditions, batchv1.PodFailurePolicyOnPodConditionsPattern{
				Type: corev1.PodConditionType(c.Type), Status: status,
			})
		}
		out.Rules[i] = rule
	}
	return out
}

// SuccessPolicy returns the run's success policy as a batchv1.SuccessPolicy of
// one rule (any SucceededCount indexes), or nil when it has none.
func (tj *TrainingJob) SuccessPolicy() *batchv1.SuccessPolicy {
	p := tj.Spec.SuccessPolicy
	if p == nil {
		return nil
	}
	n := p.SucceededCount
	return &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: &n}}}
}

// JobStatus returns s as a batchv1.JobStatus, field for field. The result shares
// nothing with s.
func (s *TrainingJobStatus) JobStatus() batchv1.JobStatus {
	c := s.DeepCopy()
	out := batchv1.JobStatus{
		Conditions:       c.Conditions,
		StartTime:        c.StartTime,
		CompletionTime:   c.CompletionTime,
		Active:           c.Active,
		Ready:            c.Ready,
		Terminating:      c.Terminating,
		Succeeded:        c.Succeeded,
		Failed:           c.Failed,
		CompletedIndexes: c.CompletedIndexes,
		FailedIndexes:    c.FailedIndexes,
	}
	if u := c.UncountedTerminatedPods; u != nil {
		out.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: u.Succeeded, Failed: u.Failed}
	}
	return out
}

// StatusFromJob returns js as a TrainingJobStatus, field for field. The result
// shares nothing with js.
func StatusFromJob(js batchv1.JobStatus) TrainingJobStatus {
	c := js.DeepCopy()
	out := TrainingJobStatus{
		Conditions:       c.Conditions,
		StartTime:        c.StartTime,
		CompletionTime:   c.CompletionTime,
		Active:           c.Active,
		Ready:            c.Ready,
		Terminating:      c.Terminating,
		Succeeded:        c.Succeeded,
		Failed:           c.Failed,
		CompletedIndexes: c.CompletedIndexes,
		FailedIndexes:    c.FailedIndexes,
	}
	if u := c.UncountedTerminatedPods; u != nil {
		out.UncountedTerminatedPods = &UncountedTerminatedPods{
			Succeeded: u.Succeeded, Failed: u.Failed,
		}
	}
	return out
}
