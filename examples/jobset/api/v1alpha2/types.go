package v1alpha2

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobSet is a group of child Jobs in roles: Replicas Jobs of each ReplicatedJob,
// built from its template and named <jobset>-<replicatedJob>-<jobIndex>. A child's
// failure is handled by the FailurePolicy (by default the whole group fails), the
// group succeeds by the SuccessPolicy (by default when every child has), and roles
// may wait for earlier ones (dependsOn, or the deprecated startupPolicy InOrder).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=js,categories=jobkit
// +kubebuilder:printcolumn:name="TerminalState",type=string,JSONPath=`.status.terminalState`
// +kubebuilder:printcolumn:name="Restarts",type=integer,JSONPath=`.status.restarts`
// +kubebuilder:printcolumn:name="Completed",type=string,JSONPath=`.status.conditions[?(@.type=="Completed")].status`
// +kubebuilder:printcolumn:name="Suspended",type=string,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type JobSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the group's roles and policies.
	Spec JobSetSpec `json:"spec,omitempty"`

	// Status is where the group is, written by its controller through the status
	// subresource.
	// +optional
	Status JobSetStatus `json:"status,omitempty"`
}

// JobSetSpec is the desired group. ReplicatedJobs, the policies, Network,
// Coordinator and ManagedBy are immutable; Suspend and TTLSecondsAfterFinished may
// change, and while the JobSet is suspended (before or after the update) so may
// the replicated jobs' templates (a queue such as Kueue places a suspended
// JobSet's pods: node selectors, tolerations, labels), not their names or
// replicas.
//
// +kubebuilder:validation:XValidation:rule="!has(self.startupPolicy) || self.startupPolicy.startupPolicyOrder != 'InOrder' || self.replicatedJobs.all(r, !has(r.dependsOn) || size(r.dependsOn) == 0)",message="startupPolicy InOrder and dependsOn cannot be combined"
// +kubebuilder:validation:XValidation:rule="!has(self.replicatedJobs[0].dependsOn) || size(self.replicatedJobs[0].dependsOn) == 0",fieldPath=".replicatedJobs",message="the first replicatedJob cannot have dependsOn"
// +kubebuilder:validation:XValidation:rule="has(self.managedBy) == has(oldSelf.managedBy)",fieldPath=".managedBy",message="managedBy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.successPolicy) == has(oldSelf.successPolicy)",fieldPath=".successPolicy",message="successPolicy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.failurePolicy) == has(oldSelf.failurePolicy)",fieldPath=".failurePolicy",message="failurePolicy is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.coordinator) == has(oldSelf.coordinator)",fieldPath=".coordinator",message="coordinator is immutable"
// +kubebuilder:validation:XValidation:rule="self.replicatedJobs == oldSelf.replicatedJobs || (((has(self.suspend) && self.suspend) || (has(oldSelf.suspend) && oldSelf.suspend)) && size(self.replicatedJobs) == size(oldSelf.replicatedJobs) && self.replicatedJobs.all(r, oldSelf.replicatedJobs.exists(o, o.name == r.name && o.replicas == r.replicas)))",fieldPath=".replicatedJobs",message="replicatedJobs is immutable while the JobSet is not suspended; while suspended only their templates may change"
type JobSetSpec struct {
	// ReplicatedJobs are the roles, in order; names are unique.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=50
	ReplicatedJobs []ReplicatedJob `json:"replicatedJobs"`

	// Network sets up the pods' DNS names: a headless Service named Subdomain and
	// each pod's hostname and subdomain.
	// +optional
	Network *Network `json:"network,omitempty"`

	// SuccessPolicy says when the group has succeeded: All (every child of the
	// target roles) or Any (one). Default: All over every role.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="successPolicy is immutable"
	// +optional
	SuccessPolicy *SuccessPolicy `json:"successPolicy,omitempty"`

	// FailurePolicy says what a failed child does to the group. Without one, the
	// first failed child fails the group.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="failurePolicy is immutable"
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`

	// StartupPolicy orders the roles' start. Deprecated: use dependsOn.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="startupPolicy is immutable"
	// +optional
	StartupPolicy *StartupPolicy `json:"startupPolicy,omitempty"`

	// Suspend suspends every child Job (and creates none) while true.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// Coordinator names one pod, whose stable DNS name every child Job and pod gets
	// in the jobset.sigs.k8s.io/coordinator label and annotation.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="coordinator is immutable"
	// +optional
	Coordinator *Coordinator `json:"coordinator,omitempty"`

	// ManagedBy names the controller that syncs this JobSet; empty or
	// jobset.sigs.k8s.io/jobset-controller means the default one.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[-A-Za-z0-9_.~!*'();@&=+$,?%#/]+$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="managedBy is immutable"
	// +optional
	ManagedBy *string `json:"managedBy,omitempty"`

	// TTLSecondsAfterFinished deletes the JobSet (and its children) this many
	// seconds after it completed or failed; unset keeps it.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// VolumeClaimPolicies are the persistent volume claims the group creates
	// and its roles share (see VolumeClaimPolicy). Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="Value is immutable"
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +optional
	VolumeClaimPolicies []VolumeClaimPolicy `json:"volumeClaimPolicies,omitempty"`
}

// ReplicatedJob is one role: Replicas child Jobs from one template.
type ReplicatedJob struct {
	// Name is the role's name, part of every child's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// GroupName groups roles for the group-index labels.
	// +kubebuilder:default=default
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	GroupName string `json:"groupName,omitempty"`

	// Template is the child Job's template. JobSet's webhook defaults its
	// completionMode to Indexed and its pods' restartPolicy to OnFailure.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Template batchv1.JobTemplateSpec `json:"template"`

	// Replicas is the number of child Jobs.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// DependsOn lists the earlier roles this one waits for: each must be Ready
	// (every child ready, succeeded or failed) or Complete (every child
	// succeeded) before this role's children are created.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=5
	// +optional
	DependsOn []DependsOn `json:"dependsOn,omitempty"`
}

// DependsOn is a role another role waits for, and for what.
type DependsOn struct {
	// Name is the earlier role's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Status is what the role waits for: Ready or Complete.
	// +kubebuilder:validation:Enum=Ready;Complete
	Status DependsOnStatus `json:"status"`
}

// DependsOnStatus is what a dependency waits for.
type DependsOnStatus string

// The DependsOnStatus values.
const (
	DependsOnReady    DependsOnStatus = "Ready"
	DependsOnComplete DependsOnStatus = "Complete"
)

// Network sets up the children's pod DNS names.
type Network struct {
	// EnableDNSHostnames gives each pod the hostname <job>-<podIndex> under
	// Subdomain, and creates the headless Service. Default true.
	// +optional
	EnableDNSHostnames *bool `json:"enableDNSHostnames,omitempty"`
	// Subdomain is the headless Service's name and the pods' subdomain; empty
	// means the JobSet's name.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Subdomain string `json:"subdomain,omitempty"`
	// PublishNotReadyAddresses publishes the pods' DNS records before they are
	// ready. Default true.
	// +optional
	PublishNotReadyAddresses *bool `json:"publishNotReadyAddresses,omitempty"`
}

// Operator says how many children of the target roles must succeed.
// +kubebuilder:validation:Enum=All;Any
type Operator string

// The Operator values.
const (
	OperatorAll Operator = "All"
	OperatorAny Operator = "Any"
)

// SuccessPolicy is when the group has succeeded.
type SuccessPolicy struct {
	// Operator is All (every child of the target roles succeeded) or Any (one).
	// +kubebuilder:default=All
	// +optional
	Operator Operator `json:"operator,omitempty"`
	// TargetReplicatedJobs are the roles counted; empty means every role.
	// +listType=atomic
	// +optional
	TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
}

// RestartStrategy is how a restart of the group replaces its children.
// +kubebuilder:validation:Enum=Recreate;BlockingRecreate;InPlaceRestart
type RestartStrategy string

// The RestartStrategy values.
const (
	// Recreate deletes the children of the old attempt and creates the new ones
	// as soon as their names are free.
	Recreate RestartStrategy = "Recreate"
	// BlockingRecreate creates no child of the new attempt while any child of an
	// old attempt still exists.
	BlockingRecreate RestartStrategy = "BlockingRecreate"
	// InPlaceRestart restarts the pods in place through an agent in each pod:
	// the controller keeps the barrier in the status (see the package doc).
	InPlaceRestart RestartStrategy = "InPlaceRestart"
)

// FailurePolicy is what a failed child does to the group.
type FailurePolicy struct {
	// MaxRestarts bounds the restarts of the group that count (RestartJobSet and
	// the default action, and RestartJob per child); past it the group fails.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxRestarts int32 `json:"maxRestarts,omitempty"`
	// RestartStrategy is how a restart replaces the children.
	// +kubebuilder:default=Recreate
	// +optional
	RestartStrategy RestartStrategy `json:"restartStrategy,omitempty"`
	// Rules are tried in order; the first that matches a failed child decides.
	// None matching: the group restarts (RestartJobSet).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Rules []FailurePolicyRule `json:"rules,omitempty"`
}

// FailurePolicyAction is what a matching rule does.
// +kubebuilder:validation:Enum=FailJobSet;RestartJobSet;RestartJobSetAndIgnoreMaxRestarts;RestartJob;RestartJobAndIgnoreMaxRestarts
type FailurePolicyAction string

// The FailurePolicyAction values.
const (
	FailJobSet                        FailurePolicyAction = "FailJobSet"
	RestartJobSet                     FailurePolicyAction = "RestartJobSet"
	RestartJobSetAndIgnoreMaxRestarts FailurePolicyAction = "RestartJobSetAndIgnoreMaxRestarts"
	RestartJob                        FailurePolicyAction = "RestartJob"
	RestartJobAndIgnoreMaxRestarts    FailurePolicyAction = "RestartJobAndIgnoreMaxRestarts"
)

// FailurePolicyRule matches a failed child by its failure reason, message and
// role, and says what to do.
type FailurePolicyRule struct {
	// Name names the rule in the RestartingJobSet condition's reason
	// (FailurePolicy_<name>); empty is defaulted to failurePolicyRule<i>.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +optional
	Name string `json:"name,omitempty"`
	// Action is what the rule does.
	Action FailurePolicyAction `json:"action"`
	// OnJobFailureReasons are the child Failed condition reasons that match;
	// empty matches any.
	// +listType=atomic
	// +kubebuilder:validation:items:Enum=BackoffLimitExceeded;DeadlineExceeded;FailedIndexes;MaxFailedIndexesExceeded;PodFailurePolicy
	// +optional
	OnJobFailureReasons []string `json:"onJobFailureReasons,omitempty"`
	// OnJobFailureMessagePatterns are RE2 patterns of the child Failed condition
	// message; empty matches any.
	// +listType=atomic
	// +optional
	OnJobFailureMessagePatterns []string `json:"onJobFailureMessagePatterns,omitempty"`
	// TargetReplicatedJobs are the roles whose children match; empty means all.
	// +listType=atomic
	// +optional
	TargetReplicatedJobs []string `json:"targetReplicatedJobs,omitempty"`
}

// StartupPolicyOrder orders the roles' start.
// +kubebuilder:validation:Enum=AnyOrder;InOrder
type StartupPolicyOrder string

// The StartupPolicyOrder values.
const (
	AnyOrder StartupPolicyOrder = "AnyOrder"
	InOrder  StartupPolicyOrder = "InOrder"
)

// StartupPolicy orders the roles' start.
type StartupPolicy struct {
	// StartupPolicyOrder is AnyOrder or InOrder (each role once the previous one
	// is ready).
	// +kubebuilder:default=AnyOrder
	// +optional
	StartupPolicyOrder StartupPolicyOrder `json:"startupPolicyOrder,omitempty"`
}

// Coordinator names one pod of the group.
type Coordinator struct {
	// ReplicatedJob is the role of the coordinator's child.
	// +kubebuilder:validation:MinLength=1
	ReplicatedJob string `json:"replicatedJob"`
	// JobIndex is the child's index in its role.
	// +kubebuilder:validation:Minimum=0
	// +optional
	JobIndex int32 `json:"jobIndex,omitempty"`
	// PodIndex is the pod's completion index in that child.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PodIndex int32 `json:"podIndex,omitempty"`
}

// JobSetList is a list of JobSets.
//
// +kubebuilder:object:root=true
type JobSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the JobSets.
	Items []JobSet `json:"items"`
}
