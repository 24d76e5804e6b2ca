package v1alpha2

import corev1 "k8s.io/api/core/v1"

// VolumeClaimPolicy is a set of persistent volume claims the group creates
// once, shared by its roles, and what becomes of them when the group is
// deleted. A claim from the template named data is named data-<jobset>; the
// controller adds the volume (of the template's name) to every role whose
// containers mount it.
//
// +kubebuilder:validation:XValidation:rule="!has(self.templates) || self.templates.all(t, !has(t.metadata.__namespace__) || size(t.metadata.__namespace__) == 0)",message="namespace cannot be set for VolumeClaimPolicies templates"
type VolumeClaimPolicy struct {
	// Templates are the claims: each one's metadata.name names its volume;
	// its namespace stays empty (the claim lives in the group's).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Templates []corev1.PersistentVolumeClaim `json:"templates,omitempty"`

	// RetentionPolicy says whether the claims go with the group (Delete, the
	// default) or stay behind (Retain).
	// +optional
	RetentionPolicy *VolumeRetentionPolicy `json:"retentionPolicy,omitempty"`
}

// VolumeRetentionPolicy is what becomes of a policy's claims when the group is
// deleted.
type VolumeRetentionPolicy struct {
	// WhenDeleted is Delete (the claims are controlled by the group, and the
	// garbage collector deletes them with it) or Retain.
	// +kubebuilder:default=Delete
	// +optional
	WhenDeleted *RetentionPolicyType `json:"whenDeleted,omitempty"`
}

// RetentionPolicyType is what becomes of a claim when its group is deleted.
// +kubebuilder:validation:Enum=Delete;Retain
type RetentionPolicyType string

// The RetentionPolicyType values.
const (
	RetentionPolicyDelete RetentionPolicyType = "Delete"
	RetentionPolicyRetain RetentionPolicyType = "Retain"
)
