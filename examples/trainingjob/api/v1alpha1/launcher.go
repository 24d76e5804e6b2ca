package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Launcher is the launcher role of a run (spec.launcher): one pod, started once
// every worker is Ready, whose success completes the run. It is retried on its
// own up to BackoffLimit times, after the run's backoff, and follows the run's
// podFailurePolicy as a worker does.
type Launcher struct {
	// BackoffLimit is how many times the launcher pod may fail and be retried,
	// within one attempt of the group, before the launcher fails for good (and
	// the group restarts, up to spec.maxRestarts). It defaults to 0.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// Template is the launcher's pod, schemaless as spec.template; its
	// restartPolicy must be Never.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template corev1.PodTemplateSpec `json:"template"`
}

// RoleStatus is the status of one role of a run with a launcher: the attempt its
// pods belong to, what that attempt's pods did (Current, as a Job status) and
// the role's counts over every attempt.
//
// +kubebuilder:validation:XValidation:rule="self.attempt >= oldSelf.attempt",fieldPath=".attempt",message="attempt may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.succeeded) ? self.succeeded : 0) >= (has(oldSelf.succeeded) ? oldSelf.succeeded : 0)",fieldPath=".succeeded",message="succeeded may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.failed) ? self.failed : 0) >= (has(oldSelf.failed) ? oldSelf.failed : 0)",fieldPath=".failed",message="failed may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.failedOnTheirOwn) ? self.failedOnTheirOwn : 0) >= (has(oldSelf.failedOnTheirOwn) ? oldSelf.failedOnTheirOwn : 0)",fieldPath=".failedOnTheirOwn",message="failedOnTheirOwn may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.succeeded) ? self.succeeded : 0) >= (has(self.current.succeeded) ? self.current.succeeded : 0)",fieldPath=".succeeded",message="succeeded counts every attempt, the current one included"
// +kubebuilder:validation:XValidation:rule="(has(self.failed) ? self.failed : 0) >= (has(self.current.failed) ? self.current.failed : 0)",fieldPath=".failed",message="failed counts every attempt, the current one included"
// +kubebuilder:validation:XValidation:rule="self.attempt != oldSelf.attempt || (has(self.current.succeeded) ? self.current.succeeded : 0) >= (has(oldSelf.current.succeeded) ? oldSelf.current.succeeded : 0)",fieldPath=".current.succeeded",message="succeeded may not decrease within an attempt"
// +kubebuilder:validation:XValidation:rule="self.attempt != oldSelf.attempt || (has(self.current.failed) ? self.current.failed : 0) >= (has(oldSelf.current.failed) ? oldSelf.current.failed : 0)",fieldPath=".current.failed",message="failed may not decrease within an attempt"
type RoleStatus struct {
	// Attempt is the group attempt (status.restarts at the time) that Current
	// describes; it never decreases and lags status.restarts while the pods of
	// the old attempt are being removed.
	// +kubebuilder:validation:Minimum=0
	Attempt int32 `json:"attempt"`

	// Succeeded counts the role's succeeded pods over every attempt, the
	// current one included; it never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed counts the role's failed pods over every attempt, the current one
	// included; it never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// FailedOnTheirOwn counts, over every attempt, the role's pods that failed
	// by themselves (a container's exit, a kubelet's eviction), not those the
	// role or the group stopped, which Failed counts as a Job does (or, when
	// the group stops them, not at all); it never decreases. It grows when such
	// a pod is recorded in current.uncountedTerminatedPods, so it may run ahead
	// of Failed by the pods not yet counted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedOnTheirOwn int32 `json:"failedOnTheirOwn,omitempty"`

	// Current is the tracking status of the role's pods of Attempt, as a Job's;
	// it starts afresh with each attempt.
	Current AttemptStatus `json:"current"`
}

// AttemptStatus is a batchv1.JobStatus with the same fields in the same order
// (so that JobStatus and AttemptStatusFromJob are Go conversions the compiler
// checks), with the rules of a Job's status that hold within one attempt.
//
// +kubebuilder:validation:XValidation:rule="!has(self.completionTime) || (has(self.conditions) && self.conditions.exists(c, c.type == 'Complete' && c.status == 'True'))",fieldPath=".completionTime",message="completionTime may be set only on a role with the condition Complete"
// +kubebuilder:validation:XValidation:rule="has(self.completionTime) || !has(self.conditions) || !self.conditions.exists(c, c.type == 'Complete' && c.status == 'True')",fieldPath=".completionTime",message="a role with the condition Complete needs completionTime"
// +kubebuilder:validation:XValidation:rule="!has(self.conditions) || !self.conditions.exists(c, c.type == 'Complete' && c.status == 'True') || !self.conditions.exists(c, c.type == 'Failed' && c.status == 'True')",fieldPath=".conditions",message="a role cannot be both Complete and Failed"
// +kubebuilder:validation:XValidation:rule="!has(self.completionTime) || !has(self.startTime) || self.completionTime >= self.startTime",fieldPath=".completionTime",message="completionTime may not be before startTime"
// +kubebuilder:validation:XValidation:rule="!has(self.ready) || self.ready <= (has(self.active) ? self.active : 0)",fieldPath=".ready",message="ready may not exceed active"
type AttemptStatus struct {
	// Conditions are the role's conditions in this attempt, as a Job's:
	// Suspended, FailureTarget, SuccessCriteriaMet, Complete and Failed.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.type in ['Suspended', 'FailureTarget', 'SuccessCriteriaMet', 'Complete', 'Failed'])",message="condition types are Suspended, FailureTarget, SuccessCriteriaMet, Complete and Failed"
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.status in ['True', 'False', 'Unknown'])",message="condition status is True, False or Unknown"
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []batchv1.JobCondition `json:"conditions,omitempty"`
	// StartTime is when the role's pods of this attempt started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the role completed (with the condition Complete).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Active is the number of the role's pods not finished and not terminating.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Active int32 `json:"active,omitempty"`
	// Succeeded counts the role's succeeded pods of this attempt.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// Failed counts the role's failed pods of this attempt.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Terminating is the number of the role's pods being deleted that have not
	// finished.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Terminating *int32 `json:"terminating,omitempty"`
	// CompletedIndexes are the role's succeeded indexes, as sorted intervals
	// ("1,3-5").
	// +kubebuilder:validation:Pattern=`^([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$`
	// +optional
	CompletedIndexes string `json:"completedIndexes,omitempty"`
	// FailedIndexes are the role's indexes that failed for good, in the same
	// form.
	// +kubebuilder:validation:Pattern=`^([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$`
	// +optional
	FailedIndexes *string `json:"failedIndexes,omitempty"`
	// UncountedTerminatedPods are the UIDs of the role's finished pods not yet
	// counted in Succeeded or Failed (their tracking finalizer is still on).
	// +optional
	UncountedTerminatedPods *batchv1.UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty"`
	// Ready is the number of active pods with the condition Ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Ready *int32 `json:"ready,omitempty"`
}

// JobStatus returns a as a batchv1.JobStatus. The result shares nothing with a.
func (a *AttemptStatus) JobStatus() batchv1.JobStatus {
	return batchv1.JobStatus(*a.DeepCopy())
}

// AttemptStatusFromJob returns js as an AttemptStatus. The result shares nothing
// with js.
func AttemptStatusFromJob(js batchv1.JobStatus) AttemptStatus {
	return AttemptStatus(*js.DeepCopy())
}
