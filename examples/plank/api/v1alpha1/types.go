package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RunJob is a job that runs exactly one pod to completion: a CI run, a build, a
// test. The plank controller starts its pod when the concurrency limits allow,
// oldest first; gives up on a pod that never schedules, never starts or runs too
// long; tells a real success from a pod that merely claims one; and replaces a pod
// lost to eviction or a dead node a bounded number of times.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rj,categories=jobkit
// +kubebuilder:printcolumn:name="Job",type=string,JSONPath=`.spec.jobName`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Pod",type=string,JSONPath=`.status.podName`
// +kubebuilder:printcolumn:name="Revivals",type=integer,JSONPath=`.status.revivals`,priority=1
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`.status.description`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type RunJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to run and under which limits. It is not changed by the
	// controller.
	Spec RunJobSpec `json:"spec"`
	// Status is where the job is, written by the controller (and by whoever
	// aborts the job, through the status subresource).
	// +optional
	Status RunJobStatus `json:"status,omitempty"`
}

// RunJobSpec describes the pod to run and the limits it runs under. It is
// immutable: the controller reads it once per run.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type RunJobSpec struct {
	// JobName names the job this run belongs to, e.g. "unit-tests". Runs of the
	// same job share MaxConcurrency and are deduplicated by DedupeKey.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	JobName string `json:"jobName"`
	// QueueName, when set, puts the run in a queue whose capacity the controller
	// is configured with (--queue name=capacity); a queue it does not know keeps
	// the run waiting with an error.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	QueueName string `json:"queueName,omitempty"`
	// MaxConcurrency caps how many runs named JobName may have a pod at once,
	// counting this one; 0 means no cap.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxConcurrency int32 `json:"maxConcurrency,omitempty"`
	// Timeouts bound the pod's time in each stage of its life; unset fields take
	// the controller's defaults, and a zero duration disables that timeout.
	// +optional
	Timeouts *PodTimeouts `json:"timeouts,omitempty"`
	// ErrorOnEviction makes an evicted pod end the run with state error, instead
	// of replacing the pod.
	// +optional
	ErrorOnEviction bool `json:"errorOnEviction,omitempty"`
	// MaxRevivals is how many times a pod that stopped unexpectedly (evicted,
	// node lost, phase Unknown) is replaced before the run errors; nil means 3,
	// 0 never replaces.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRevivals *int32 `json:"maxRevivals,omitempty"`
	// DedupeKey identifies what the run tests (a pull request, a commit). When a
	// run starts, older unfinished runs with the same JobName and DedupeKey are
	// aborted. Runs without a DedupeKey are never deduplicated.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DedupeKey string `json:"dedupeKey,omitempty"`
	// PodSpec is the spec of the pod to run. RestartPolicy defaults to Never.
	// The CRD keeps it schemaless (the API server validates it when the pod is
	// created), so that the CRD does not carry a copy of the PodSpec schema of one
	// Kubernetes version.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	PodSpec corev1.PodSpec `json:"podSpec"`
}

// PodTimeouts bound how long the pod may stay in each stage of its life.
type PodTimeouts struct {
	// Unscheduled bounds the time from the pod's creation until a node's
	// kubelet accepts it (status.startTime is set).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Unscheduled *metav1.Duration `json:"unscheduled,omitempty"`
	// Pending bounds the time from status.startTime while the pod is still
	// Pending (pulling images, running init containers).
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Pending *metav1.Duration `json:"pending,omitempty"`
	// Running bounds the time from status.startTime while the pod is Running;
	// an expired running timeout aborts the run.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$`
	// +optional
	Running *metav1.Duration `json:"running,omitempty"`
}

// State is where a RunJob is in its life.
//
// +kubebuilder:validation:Enum=triggered;pending;success;failure;error;aborted
type State string

// The states of a RunJob. A run moves from triggered to pending when its pod is
// created, and from pending to one of the four final states.
const (
	// StateTriggered: waiting for the concurrency limits to allow the pod.
	StateTriggered State = "triggered"
	// StatePending: the pod was created and the run has not finished.
	StatePending State = "pending"
	// StateSuccess: the pod succeeded, every container exiting with code 0.
	StateSuccess State = "success"
	// StateFailure: the pod failed: the workload failed.
	StateFailure State = "failure"
	// StateError: the infrastructure failed (a pod that cannot be created,
	// never schedules, was evicted or claims a success it did not have).
	StateError State = "error"
	// StateAborted: someone aborted the run (by setting this state through the
	// status subresource), a newer run with the same DedupeKey replaced it, or its
	// pod ran too long. The controller deletes the pod and completes the run.
	StateAborted State = "aborted"
)

// Finished reports whether s is one of the four final states.
func (s State) Finished() bool {
	switch s {
	case StateSuccess, StateFailure, StateError, StateAborted:
		return true
	}
	return false
}

// RunJobStatus is what the controller records about a run.
type RunJobStatus struct {
	// State is where the run is; empty is treated as triggered.
	// +optional
	State State `json:"state,omitempty"`
	// Description says in words why the run is in its state.
	// +optional
	Description string `json:"description,omitempty"`
	// PodName is the name of the run's pod, set when it is created.
	// +optional
	PodName string `json:"podName,omitempty"`
	// StartTime is when the controller first saw the run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// PendingTime is when the pod was first created.
	// +optional
	PendingTime *metav1.Time `json:"pendingTime,omitempty"`
	// CompletionTime is when the run finished. A run with a completion time is
	// not reconciled again.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Revivals counts the pods replaced after they stopped unexpectedly. The
	// controller writes it before it deletes the pod, so the bound holds across
	// controller restarts.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Revivals int32 `json:"revivals,omitempty"`
	// RevivedPodUID is the UID of the pod whose replacement Revivals last
	// counted, so that the same pod is never counted twice.
	// +optional
	RevivedPodUID types.UID `json:"revivedPodUID,omitempty"`
}

// RunJobList is a list of RunJobs.
//
// +kubebuilder:object:root=true
type RunJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the RunJobs.
	Items []RunJob `json:"items"`
}
