package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TrainingJob is a run of Workers indexed pods (index 0 to Workers-1), such as a
// distributed training run. Each index is retried on its own, after a backoff,
// up to BackoffLimitPerIndex times; a pod failure matching a FailJob rule fails
// the whole run at once; the run succeeds when every index has succeeded or, with
// a SuccessPolicy, when enough of them have.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tj,categories=jobkit
// +kubebuilder:printcolumn:name="Workers",type=integer,JSONPath=`.spec.workers`
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.active`
// +kubebuilder:printcolumn:name="Succeeded",type=integer,JSONPath=`.status.succeeded`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.failed`
// +kubebuilder:printcolumn:name="Completed",type=string,JSONPath=`.status.completedIndexes`,priority=1
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.succeeded) || self.status.succeeded <= self.spec.workers",fieldPath=".status.succeeded",message="succeeded may not exceed spec.workers"
// +kubebuilder:validation:XValidation:rule="has(self.spec.launcher) || !has(self.status) || !(has(self.status.launcher) || has(self.status.workers) || has(self.status.groupConditions) || has(self.status.terminalState) || has(self.status.restarts) || has(self.status.restartsCountTowardsMax))",fieldPath=".status",message="a run without spec.launcher has no launcher, workers, groupConditions, terminalState or restarts status"
// +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.restartsCountTowardsMax) || self.status.restartsCountTowardsMax <= (has(self.spec.maxRestarts) ? self.spec.maxRestarts : 0)",fieldPath=".status.restartsCountTowardsMax",message="restartsCountTowardsMax may not exceed spec.maxRestarts"
// +kubebuilder:validation:XValidation:rule="!has(self.status) || !has(self.status.workers) || !has(self.status.workers.current.succeeded) || self.status.workers.current.succeeded <= self.spec.workers",fieldPath=".status.workers.current.succeeded",message="succeeded may not exceed spec.workers"
type TrainingJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the run's workers, retries, rules and pod template.
	Spec TrainingJobSpec `json:"spec"`

	// Status is where the run is, written by its controller through the status
	// subresource. It mirrors batchv1.JobStatus.
	// +optional
	Status TrainingJobStatus `json:"status,omitempty"`
}

// TrainingJobSpec is a batch/v1 Job spec of completion mode Indexed in the words
// of a training run (with a Launcher, two roles of a group). Workers, the
// template, the retry and failure settings, ManagedBy, Launcher and MaxRestarts
// are immutable; Parallelism, Suspend and ActiveDeadlineSeconds may change.
//
// +kubebuilder:validation:XValidation:rule="!has(self.maxFailedIndexes) || self.maxFailedIndexes <= self.workers",fieldPath=".maxFailedIndexes",message="maxFailedIndexes may not exceed workers"
// +kubebuilder:validation:XValidation:rule="!has(self.successPolicy) || self.successPolicy.succeededCount <= self.workers",fieldPath=".successPolicy.succeededCount",message="succeededCount may not exceed workers"
// +kubebuilder:validation:XValidation:rule="has(self.maxFailedIndexes) == has(oldSelf.maxFailedIndexes)",fieldPath=".maxFailedIndexes",message="maxFailedIndexes is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.backoff) == has(oldSelf.backoff)",fieldPath=".backoff",message="backoff is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.podFailurePolicy) == has(oldSelf.podFailurePolicy)",fieldPath=".podFailurePolicy",message="podFailurePolicy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.successPolicy) == has(oldSelf.successPolicy)",fieldPath=".successPolicy",message="successPolicy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.managedBy) == has(oldSelf.managedBy)",fieldPath=".managedBy",message="managedBy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.launcher) == has(oldSelf.launcher)",fieldPath=".launcher",message="launcher is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.maxRestarts) == has(oldSelf.maxRestarts)",fieldPath=".maxRestarts",message="maxRestarts is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.maxRestarts) || has(self.launcher)",fieldPath=".maxRestarts",message="maxRestarts needs a launcher"
// +kubebuilder:validation:XValidation:rule="self.template == oldSelf.template || ((has(self.suspend) && self.suspend) || (has(oldSelf.suspend) && oldSelf.suspend))",fieldPath=".template",message="template is immutable while the run is not suspended"
// +kubebuilder:validation:XValidation:rule="!has(self.launcher) || !has(oldSelf.launcher) || self.launcher == oldSelf.launcher || ((has(self.suspend) && self.suspend) || (has(oldSelf.suspend) && oldSelf.suspend))",fieldPath=".launcher",message="launcher is immutable while the run is not suspended"
type TrainingJobSpec struct {
	// Workers is the number of indexes, as a Job's completions: one pod per
	// index succeeds for the run to complete (unless SuccessPolicy says fewer
	// suffice). Each pod learns its index from the annotation and label
	// batch.kubernetes.io/job-completion-index and the JOB_COMPLETION_INDEX
	// environment variable.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="workers is immutable"
	Workers int32 `json:"workers"`

	// Parallelism is how many workers may run at once; nil means Workers, 0
	// runs none (as Suspend does, without the Suspended condition).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100000
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`

	// BackoffLimitPerIndex is how many times each index may fail and be
	// retried before the index is marked failed (status.failedIndexes); the run
	// fails when MaxFailedIndexes is exceeded, or at its end when any index
	// failed. It defaults to 0: an index that fails once fails for good. (A
	// TrainingJob always counts retries per index; it has no backoffLimit for the
	// run as a whole.)
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="backoffLimitPerIndex is immutable"
	// +optional
	BackoffLimitPerIndex *int32 `json:"backoffLimitPerIndex,omitempty"`

	// MaxFailedIndexes fails the run as soon as more indexes than this have
	// failed; nil waits for every index to finish. It may not exceed Workers.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="maxFailedIndexes is immutable"
	// +optional
	MaxFailedIndexes *int32 `json:"maxFailedIndexes,omitempty"`

	// Backoff is the delay before an index that failed is retried; nil means
	// 10s, doubling, at most 6m.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="backoff is immutable"
	// +optional
	Backoff *RetryBackoff `json:"backoff,omitempty"`

	// PodFailurePolicy decides what a failed pod means from its exit codes or
	// conditions: fail the run (FailJob), fail its index (FailIndex), retry
	// without counting (Ignore) or count a retry (Count, the default for a pod no
	// rule matches). It has the shape and meaning of batchv1.PodFailurePolicy.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="podFailurePolicy is immutable"
	// +optional
	PodFailurePolicy *PodFailurePolicy `json:"podFailurePolicy,omitempty"`

	// SuccessPolicy, when set, completes the run once enough workers have
	// succeeded; the controller then removes the workers still running.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="successPolicy is immutable"
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// Suspend stops the run: its pods are removed and none start until it is
	// set back to false.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ActiveDeadlineSeconds bounds the run's time from its start; when it runs
	// out, the run fails with reason DeadlineExceeded.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ManagedBy names the controller that reconciles this run, a
	// domain-prefixed path such as example.com/trainer. A controller built on
	// jobkit is configured with its own name and leaves runs managed by another
	// alone.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[-A-Za-z0-9_.~!*'();@&=+$,?%#/]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="managedBy is immutable"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`

	// Template is the pod of every worker. Its restartPolicy must be Never (a
	// container restarted in place would hide the exit codes the failure policy
	// reads); the controller refuses the run otherwise. The CRD keeps it
	// schemaless, so that it does not carry the PodSpec schema of one Kubernetes
	// version: the API server validates the pods when the controller creates
	// them.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Template corev1.PodTemplateSpec `json:"template"`

	// Launcher, when set, adds one launcher pod to the workers: it starts once
	// every worker is Ready, the run succeeds when it succeeds, and a role that
	// fails for good restarts the whole group (up to MaxRestarts times). Unset,
	// the run is the workers alone, as it always was.
	// +optional
	Launcher *Launcher `json:"launcher,omitempty"`

	// MaxRestarts bounds the restarts of the whole group (launcher and workers,
	// every pod replaced) after a role failed for good; nil means 0: the first
	// such failure fails the run. Only with a Launcher.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="maxRestarts is immutable"
	// +optional
	MaxRestarts *int32 `json:"maxRestarts,omitempty"`
}

// RetryBackoff is the delay before a failed index is retried: Initial after its
// first failure, doubling after each further failure, at most Max.
type RetryBackoff struct {
	// Initial is the delay after the first failure; nil means 10s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Initial *metav1.Duration `json:"initial,omitempty"`
	// Max caps the delay; nil means 6m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Max *metav1.Duration `json:"max,omitempty"`
}

// PodFailurePolicy is batchv1.PodFailurePolicy with its API validation written
// into the schema. TrainingJob.PodFailurePolicy converts it.
type PodFailurePolicy struct {
	// Rules are tried in order; the first that matches a failed pod decides.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	Rules []PodFailurePolicyRule `json:"rules"`
}

// PodFailurePolicyRule is one rule: an action and exactly one requirement.
//
// +kubebuilder:validation:XValidation:rule="has(self.onExitCodes) != (has(self.onPodConditions) && size(self.onPodConditions) > 0)",message="exactly one of onExitCodes and onPodConditions must be set"
type PodFailurePolicyRule struct {
	// Action is what a matching failure does: FailJob fails the run, FailIndex
	// fails the pod's index, Ignore retries without counting, Count counts a
	// retry.
	// +kubebuilder:validation:Enum=FailJob;FailIndex;Ignore;Count
	Action batchv1.PodFailurePolicyAction `json:"action"`
	// OnExitCodes matches on the exit codes of the pod's containers.
	// +optional
	OnExitCodes *PodFailurePolicyOnExitCodes `json:"onExitCodes,omitempty"`
	// OnPodConditions matches when the pod has any of these conditions.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	OnPodConditions []PodFailurePolicyOnPodConditionsPattern `json:"onPodConditions,omitempty"`
}

// PodFailurePolicyOnExitCodes matches a failed pod by the exit codes of its
// containers: with In, when any container exited with one of Values; with NotIn,
// when any container exited with a code that is neither 0 nor in Values.
//
// +kubebuilder:validation:XValidation:rule="self.operator != 'In' || !(0 in self.values)",fieldPath=".values",message="0 may not be listed with the operator In"
type PodFailurePolicyOnExitCodes struct {
	// ContainerName restricts the match to one container; nil looks at all.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ContainerName *string `json:"containerName,omitempty"`
	// Operator is In or NotIn.
	// +kubebuilder:validation:Enum=In;NotIn
	Operator batchv1.PodFailurePolicyOnExitCodesOperator `json:"operator"`
	// Values are the exit codes, each at most once.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=255
	// +listType=set
	Values []int32 `json:"values"`
}

// PodFailurePolicyOnPodConditionsPattern matches a pod condition of Type with
// Status.
type PodFailurePolicyOnPodConditionsPattern struct {
	// Type is the pod condition's type, e.g. DisruptionTarget.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`
	// Status is the condition's status; empty means True.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
}

// SuccessPolicy completes the run before every worker has succeeded.
type SuccessPolicy struct {
	// SucceededCount is how many workers must have succeeded for the run to
	// complete. It may not exceed Workers.
	// +kubebuilder:validation:Minimum=1
	SucceededCount int32 `json:"succeededCount"`
}

// TrainingJobStatus mirrors batchv1.JobStatus: the same fields with the same JSON
// names and meanings, with bounds the API server checks. JobStatus and
// StatusFromJob convert.
//
// +kubebuilder:validation:XValidation:rule="!has(self.completionTime) || (has(self.conditions) && self.conditions.exists(c, c.type == 'Complete' && c.status == 'True'))",fieldPath=".completionTime",message="completionTime may be set only on a run with the condition Complete"
// +kubebuilder:validation:XValidation:rule="has(self.completionTime) || !has(self.conditions) || !self.conditions.exists(c, c.type == 'Complete' && c.status == 'True')",fieldPath=".completionTime",message="a run with the condition Complete needs completionTime"
// +kubebuilder:validation:XValidation:rule="!has(self.conditions) || !self.conditions.exists(c, c.type == 'Complete' && c.status == 'True') || !self.conditions.exists(c, c.type == 'Failed' && c.status == 'True')",fieldPath=".conditions",message="a run cannot be both Complete and Failed"
// +kubebuilder:validation:XValidation:rule="!has(self.completionTime) || !has(self.startTime) || self.completionTime >= self.startTime",fieldPath=".completionTime",message="completionTime may not be before startTime"
// +kubebuilder:validation:XValidation:rule="!has(self.active) || self.active == 0 || !has(self.conditions) || !self.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True')",fieldPath=".active",message="a finished run has no active pods"
// +kubebuilder:validation:XValidation:rule="!has(self.terminating) || self.terminating == 0 || !has(self.conditions) || !self.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True')",fieldPath=".terminating",message="a finished run has no terminating pods"
// +kubebuilder:validation:XValidation:rule="!has(self.uncountedTerminatedPods) || ((!has(self.uncountedTerminatedPods.succeeded) || size(self.uncountedTerminatedPods.succeeded) == 0) && (!has(self.uncountedTerminatedPods.failed) || size(self.uncountedTerminatedPods.failed) == 0)) || !has(self.conditions) || !self.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True')",fieldPath=".uncountedTerminatedPods",message="a finished run has no uncounted pods"
// +kubebuilder:validation:XValidation:rule="!has(self.ready) || self.ready <= (has(self.active) ? self.active : 0)",fieldPath=".ready",message="ready may not exceed active"
// +kubebuilder:validation:XValidation:rule="(has(self.succeeded) ? self.succeeded : 0) >= (has(oldSelf.succeeded) ? oldSelf.succeeded : 0)",fieldPath=".succeeded",message="succeeded may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.failed) ? self.failed : 0) >= (has(oldSelf.failed) ? oldSelf.failed : 0)",fieldPath=".failed",message="failed may not decrease"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.conditions) || !oldSelf.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True') || (has(self.conditions) && self.conditions.exists(c, (c.type == 'Complete' || c.type == 'Failed') && c.status == 'True'))",fieldPath=".conditions",message="a finished run stays finished"
// +kubebuilder:validation:XValidation:rule="(has(self.restarts) ? self.restarts : 0) >= (has(oldSelf.restarts) ? oldSelf.restarts : 0)",fieldPath=".restarts",message="restarts may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.restartsCountTowardsMax) ? self.restartsCountTowardsMax : 0) >= (has(oldSelf.restartsCountTowardsMax) ? oldSelf.restartsCountTowardsMax : 0)",fieldPath=".restartsCountTowardsMax",message="restartsCountTowardsMax may not decrease"
// +kubebuilder:validation:XValidation:rule="(has(self.restartsCountTowardsMax) ? self.restartsCountTowardsMax : 0) <= (has(self.restarts) ? self.restarts : 0)",fieldPath=".restartsCountTowardsMax",message="restartsCountTowardsMax may not exceed restarts"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.terminalState) || (has(self.terminalState) && self.terminalState == oldSelf.terminalState)",fieldPath=".terminalState",message="a finished run keeps its terminal state"
// +kubebuilder:validation:XValidation:rule="!has(self.launcher) || self.launcher.attempt <= (has(self.restarts) ? self.restarts : 0)",fieldPath=".launcher.attempt",message="attempt may not exceed restarts"
// +kubebuilder:validation:XValidation:rule="!has(self.workers) || self.workers.attempt <= (has(self.restarts) ? self.restarts : 0)",fieldPath=".workers.attempt",message="attempt may not exceed restarts"
// +kubebuilder:validation:XValidation:rule="!has(self.launcher) || !has(self.launcher.current.succeeded) || self.launcher.current.succeeded <= 1",fieldPath=".launcher.current.succeeded",message="one launcher pod succeeds at most"
type TrainingJobStatus struct {
	// Conditions are the run's conditions, at most one of each type: Suspended,
	// FailureTarget, SuccessCriteriaMet, Complete and Failed, as on a Job.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.type in ['Suspended', 'FailureTarget', 'SuccessCriteriaMet', 'Complete', 'Failed'])",message="condition types are Suspended, FailureTarget, SuccessCriteriaMet, Complete and Failed"
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.status in ['True', 'False', 'Unknown'])",message="condition status is True, False or Unknown"
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []batchv1.JobCondition `json:"conditions,omitempty"`

	// StartTime is when the controller started the run (again after a
	// suspension).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the run completed; set only with the condition
	// Complete.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Active is the number of pods not finished and not terminating.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Active int32 `json:"active,omitempty"`

	// Ready is the number of active pods with the condition Ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Ready *int32 `json:"ready,omitempty"`

	// Terminating is the number of pods being deleted that have not finished.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Terminating *int32 `json:"terminating,omitempty"`

	// Succeeded is the number of succeeded pods counted; it never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of failed pods counted; it never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// CompletedIndexes are the indexes that succeeded, as sorted intervals,
	// e.g. "1,3-5,7".
	// +kubebuilder:validation:Pattern=`^([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$`
	// +optional
	CompletedIndexes string `json:"completedIndexes,omitempty"`

	// FailedIndexes are the indexes that failed for good (with
	// BackoffLimitPerIndex), in the same form as CompletedIndexes.
	// +kubebuilder:validation:Pattern=`^([0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)?$`
	// +optional
	FailedIndexes *string `json:"failedIndexes,omitempty"`

	// UncountedTerminatedPods are the UIDs of finished pods whose tracking
	// finalizer the controller has not removed yet, so not yet in Succeeded or
	// Failed.
	// +optional
	UncountedTerminatedPods *UncountedTerminatedPods `json:"uncountedTerminatedPods,omitempty"`

	// The fields below are those of a run with a launcher (spec.launcher); the
	// fields above stay unset on such a run, whose workers' status is Workers.

	// Restarts counts the restarts of the whole group (the current attempt); it
	// never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// RestartsCountTowardsMax counts the restarts that count towards
	// spec.maxRestarts; it never decreases.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RestartsCountTowardsMax int32 `json:"restartsCountTowardsMax,omitempty"`

	// TerminalState is Completed or Failed once the run has finished.
	// +kubebuilder:validation:Enum=Completed;Failed
	// +optional
	TerminalState string `json:"terminalState,omitempty"`

	// GroupConditions are the run's conditions as a group, one of each type:
	// Completed, Failed, Suspended, RestartingJobSet, StartupPolicyInProgress,
	// StartupPolicyCompleted (JobSet's types and reasons).
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.type in ['Completed', 'Failed', 'Suspended', 'RestartingJobSet', 'StartupPolicyInProgress', 'StartupPolicyCompleted'])",message="group condition types are Completed, Failed, Suspended, RestartingJobSet, StartupPolicyInProgress and StartupPolicyCompleted"
	// +listType=map
	// +listMapKey=type
	// +optional
	GroupConditions []metav1.Condition `json:"groupConditions,omitempty"`

	// Launcher is the status of the launcher role.
	// +optional
	Launcher *RoleStatus `json:"launcher,omitempty"`
	// Workers is the status of the workers role.
	// +optional
	Workers *RoleStatus `json:"workers,omitempty"`
}

// UncountedTerminatedPods mirrors batchv1.UncountedTerminatedPods.
type UncountedTerminatedPods struct {
	// Succeeded are the UIDs of succeeded pods, each at most once.
	// +kubebuilder:validation:MaxItems=100000
	// +listType=set
	// +optional
	Succeeded []types.UID `json:"succeeded,omitempty"`
	// Failed are the UIDs of failed pods, each at most once.
	// +kubebuilder:validation:MaxItems=100000
	// +listType=set
	// +optional
	Failed []types.UID `json:"failed,omitempty"`
}

// TrainingJobList is a list of TrainingJobs.
//
// +kubebuilder:object:root=true
type TrainingJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the TrainingJobs.
	Items []TrainingJob `json:"items"`
}
