package owner

import (
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Kind is the kind of object that owns a workload's pods, and the finalizer its
// controller tracks them with.
type Kind struct {
	// Group, Version and Kind name the owner's API type, as in its controller
	// references ("batch", "v1", "Job"). Version is the one written into new
	// references; a reference of any version of Group matches.
	Group, Version, Kind string
	// Finalizer is the tracking finalizer the controller adds to the pods it
	// creates and removes once it has counted them: a qualified name such as
	// "batch.kubernetes.io/job-tracking" (batch/v1 Jobs) or
	// "example.com/trainingjob-tracking".
	Finalizer string
	// KeyPrefix starts the keys of the label and annotations the controller puts on
	// the pods it creates (IndexKey, FailureCountKey, IgnoredFailureCountKey), such
	// as "ml.example.com/trainingjob-". Empty means "batch.kubernetes.io/job-", the
	// keys of batch/v1 Jobs (owner.BatchJob), which kubectl and the tools of the
	// batch API read; a custom owner that sets it gets keys of its own domain.
	KeyPrefix string
}

// IndexKey is the annotation and label that hold the completion index of an
// Indexed owner's pod (KeyPrefix + "completion-index"; for batch/v1,
// batch.kubernetes.io/job-completion-index). The annotation is the one read back;
// the label is for selection and the downward API (the JOB_COMPLETION_INDEX
// environment variable reads it).
//
// The keys of the default prefix cost nothing; those of a KeyPrefix of the kind's
// own are built at each call (one small allocation).
func (k Kind) IndexKey() string {
	if k.KeyPrefix == "" {
		return batchv1.JobCompletionIndexAnnotation
	}
	return k.KeyPrefix + "completion-index"
}

// FailureCountKey is the annotation that holds the failures of an index before the
// pod, with backoffLimitPerIndex (KeyPrefix + "index-failure-count").
func (k Kind) FailureCountKey() string {
	if k.KeyPrefix == "" {
		return batchv1.JobIndexFailureCountAnnotation
	}
	return k.KeyPrefix + "index-failure-count"
}

// IgnoredFailureCountKey is the annotation that holds the failures of an index a
// pod failure policy ignored (KeyPrefix + "index-ignored-failure-count").
func (k Kind) IgnoredFailureCountKey() string {
	if k.KeyPrefix == "" {
		return batchv1.JobIndexIgnoredFailureCountAnnotation
	}
	return k.KeyPrefix + "index-ignored-failure-count"
}

// BatchJob is the kind of a batch/v1 Job, with its tracking finalizer.
var BatchJob = Kind{Group: batchv1.GroupName, Version: "v1", Kind: "Job", Finalizer: batchv1.JobTrackingFinalizer}

// GroupVersionKind returns the owner's API type.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// String returns "Kind.group" ("Job.batch"), as kubectl names a kind.
func (k Kind) String() string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Kind + "." + k.Group
}

// Matches reports whether ref refers to an object of this kind: the same kind and
// group, any version. It does not look at the UID: see the package's contract.
func (k Kind) Matches(ref *metav1.OwnerReference) bool {
	if ref == nil || ref.Kind != k.Kind {
		return false
	}
	group, _, found := strings.Cut(ref.APIVersion, "/")
	if !found { // the core group: "v1"
		group = ""
	}
	return group == k.Group
}

// ControllerOf returns the controller reference of an object's owner references
// when it refers to this kind, or nil. It does not copy.
func (k Kind) ControllerOf(o metav1.Object) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(o)
	if !k.Matches(ref) {
		return nil
	}
	return ref
}

// IsControlledBy reports whether o's controller reference is to the owner of this
// kind with the given UID: the test of the package's contract.
func (k Kind) IsControlledBy(o metav1.Object, uid string) bool {
	ref := k.ControllerOf(o)
	return ref != nil && string(ref.UID) == uid
}

// NewControllerRef returns the controller reference a pod created for owner gets:
// this kind at Version, the owner's name and UID, controller and
// blockOwnerDeletion true (the garbage collector deletes the pods with their owner,
// and a foreground deletion waits for them).
func (k Kind) NewControllerRef(owner metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         k.GroupVersionKind().GroupVersion().String(),
		Kind:               k.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// HasFinalizer reports whether o carries this kind's tracking finalizer.
func (k Kind) HasFinalizer(o metav1.Object) bool {
	for _, f := range o.GetFinalizers() {
		if f == k.Finalizer {
			return true
		}
	}
	return false
}

// ErrInvalidKind is wrapped by the errors Validate returns.
var ErrInvalidKind = errors.New("invalid owner kind")

// Validate reports the fields of k that cannot name an owner: an empty Version or
// Kind, a Group or Finalizer that is not a valid name, a KeyPrefix that makes keys
// that are not valid label keys, naming each with its value.
func (k Kind) Validate() error {
	var errs []error
	bad := func(field, value, msg string) {
		errs = append(errs, fmt.Errorf("%w: %s %q: %s", ErrInvalidKind, field, value, msg))
	}
	if k.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(k.Group) {
			bad("Group", k.Group, msg)
		}
	}
	if k.Version == "" {
		bad("Version", k.Version, "required")
	}
	if k.Kind == "" {
		bad("Kind", k.Kind, "required")
	}
	if k.Finalizer == "" {
		bad("Finalizer", k.Finalizer, "required")
	} else if !strings.Contains(k.Finalizer, "/") {
		bad("Finalizer", k.Finalizer, `must be qualified with a domain ("example.com/name")`)
	} else {
		prefix, name, _ := strings.Cut(k.Finalizer, "/")
		for _, msg := range validation.IsDNS1123Subdomain(prefix) {
			bad("Finalizer", k.Finalizer, "prefix "+msg)
		}
		if name == "" || len(name) > 63 || strings.Contains(name, "/") {
			bad("Finalizer", k.Finalizer, "name part must be 1 to 63 characters without '/'")
		}
	}
	if k.KeyPrefix != "" {
		for _, key := range []string{k.IndexKey(), k.IgnoredFailureCountKey()} {
			for _, msg := range validation.IsQualifiedName(key) {
				bad("KeyPrefix", k.KeyPrefix, fmt.Sprintf("key %q: %s", key, msg))
			}
		}
	}
	return errors.Join(errs...)
}
