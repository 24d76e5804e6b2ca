package v1alpha2

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TerminalState is how a finished group ended.
// +kubebuilder:validation:Enum=Completed;Failed
type TerminalState string

// The TerminalState values.
const (
	Completed TerminalState = "Completed"
	Failed    TerminalState = "Failed"
)

// JobSetStatus is where the group is.
//
// +kubebuilder:validation:XValidation:rule="!has(self.restartsCountTowardsMax) || (has(self.restarts) && self.restartsCountTowardsMax <= self.restarts)",fieldPath=".restartsCountTowardsMax",message="restartsCountTowardsMax may not exceed restarts"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.restarts) || (has(self.restarts) && self.restarts >= oldSelf.restarts)",fieldPath=".restarts",message="restarts may not decrease"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.restartsCountTowardsMax) || (has(self.restartsCountTowardsMax) && self.restartsCountTowardsMax >= oldSelf.restartsCountTowardsMax)",fieldPath=".restartsCountTowardsMax",message="restartsCountTowardsMax may not decrease"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.terminalState) || (has(self.terminalState) && self.terminalState == oldSelf.terminalState)",fieldPath=".terminalState",message="terminalState may not change once set"
type JobSetStatus struct {
	// Conditions are Completed, Failed, Suspended, RestartingJobSet,
	// StartupPolicyInProgress and StartupPolicyCompleted.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Restarts counts every restart of the group, of any kind.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Restarts int32 `json:"restarts,omitempty"`

	// RestartsCountTowardsMax counts the restarts that count toward
	// failurePolicy.maxRestarts (RestartJobSet and the default action).
	// +kubebuilder:validation:Minimum=0
	// +optional
	RestartsCountTowardsMax int32 `json:"restartsCountTowardsMax,omitempty"`

	// TerminalState is set once the group has completed or failed.
	// +optional
	TerminalState TerminalState `json:"terminalState,omitempty"`

	// ReplicatedJobsStatus has one entry per role: its children's counts.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	// +optional
	ReplicatedJobsStatus []ReplicatedJobStatus `json:"replicatedJobsStatus,omitempty"`

	// PreviousInPlaceRestartAttempt, under restartStrategy InPlaceRestart, is
	// the attempt whose pods are to restart in place: a pod whose agent reports
	// this attempt or an earlier one restarts its containers. It never
	// decreases.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="previousInPlaceRestartAttempt may not decrease"
	// +optional
	PreviousInPlaceRestartAttempt *int32 `json:"previousInPlaceRestartAttempt,omitempty"`

	// CurrentInPlaceRestartAttempt, under restartStrategy InPlaceRestart, is
	// the attempt every pod has reached: a pod on it runs its worker (the
	// barrier is lifted).
	// +kubebuilder:validation:Minimum=0
	// +optional
	CurrentInPlaceRestartAttempt *int32 `json:"currentInPlaceRestartAttempt,omitempty"`
}

// ReplicatedJobStatus is a role's children's counts, and the per-child restarts of
// RestartJob.
type ReplicatedJobStatus struct {
	// Name is the role's name.
	Name string `json:"name"`
	// Ready counts the children whose ready and succeeded pods reach
	// min(parallelism, completions).
	// +kubebuilder:validation:Minimum=0
	Ready int32 `json:"ready"`
	// Succeeded counts the children that completed.
	// +kubebuilder:validation:Minimum=0
	Succeeded int32 `json:"succeeded"`
	// Failed counts the children that failed.
	// +kubebuilder:validation:Minimum=0
	Failed int32 `json:"failed"`
	// Active counts the children with an active pod.
	// +kubebuilder:validation:Minimum=0
	Active int32 `json:"active"`
	// Suspended counts the suspended children.
	// +kubebuilder:validation:Minimum=0
	Suspended int32 `json:"suspended"`
	// JobRestarts[i] counts the restarts of child i by RestartJob rules.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	JobRestarts []int32 `json:"jobRestarts,omitempty"`
	// JobRestartsCountTowardsMax[i] counts those of JobRestarts[i] that count
	// toward maxRestarts.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	JobRestartsCountTowardsMax []int32 `json:"jobRestartsCountTowardsMax,omitempty"`
}
