package plan

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Workload is the owner of a set of pods as Compute sees it: its identity, its spec
// in Job terms and its status, and what a Reconciler needs to write the status back
// and record events. A batch/v1 Job is one (JobWorkload); a custom resource
// (a TrainingJob, a CI run, a task group) is another, converted by its controller.
// The kind of the owner, and the finalizer that tracks its pods, are Input.Owner.
//
// Compute reads a Workload and never modifies it or anything it points to.
type Workload struct {
	// Namespace and Name are the owner's: created pods go to Namespace and are
	// named after Name; the pod of index i of an Indexed owner gets the hostname
	// "<Name>-<i>", as upstream. Its subdomain is the template's, none unless the
	// template sets one (the name of a headless Service, through which the pods
	// reach each other as "<Name>-<i>.<subdomain>"), as upstream: the controller
	// adds none.
	Namespace, Name string
	// UID is the owner's UID. Ownership is by controller-reference UID: a pod is the
	// owner's when its controller reference has this UID; created and adopted pods
	// get a controller reference to it.
	UID types.UID
	// Deleting is true when the owner has a deletionTimestamp: nothing is created,
	// adopted or released, and the pods' finalizers are removed as they finish.
	Deleting bool
	// Spec is the owner's spec in Job terms.
	Spec Spec
	// Status is the owner's status as read. A custom resource either embeds a
	// batchv1.JobStatus or converts its own onto it; what Compute writes back
	// (Plan.RecordStatus, Plan.Status, Settled.Status) is in the same shape.
	Status batchv1.JobStatus

	// Generation is the owner's metadata.generation, which the API server raises on
	// every spec change. Compute does not read it; reconcile's ObserveOwnerEvent
	// tells a spec change from a status or metadata change by it (the former syncs
	// at once, the latter after the batch period). A conversion that leaves it zero
	// makes every update wait the batch period.
	Generation int64
	// ResourceVersion is the owner's resourceVersion as read. Compute does not read
	// it; a reconcile.Reconciler sends it as the precondition of its status write and
	// tells by it a cache that has not caught up with that write.
	ResourceVersion string
	// Object is the owner object as read. Compute does not read it; a
	// reconcile.Reconciler records events on it (it is required there) and a
	// StatusWriter starts from it.
	Object runtime.Object
	// Backoff, when not zero, is this owner's own pod failure backoff (a resource
	// that lets its users set the retry delays); zero means the configured one
	// (reconcile.Config.Backoff, or Input.Options.Backoff). Its zero fields mean the
	// defaults. Compute reads Input.Options, not this field: the Reconciler puts it
	// there.
	Backoff plainbackoff.Policy
}

// Spec is what Compute reads of an owner's spec: the fields of a batchv1.JobSpec
// that decide a sync, with the same meaning, the same API defaults for nil values
// and the same validation. A field a custom resource does not offer stays nil (its
// default). Fields of batchv1.JobSpec not listed here (ttlSecondsAfterFinished,
// manualSelector) are not the plan's business.
type Spec struct {
	// Parallelism is the number of pods to run at once; nil means 1.
	Parallelism *int32
	// Completions is the number of pods that must succeed; nil with a nil
	// Parallelism means 1, nil with a Parallelism set means a work queue (done when
	// any pod succeeds and none is active). Required for Indexed.
	Completions *int32
	// CompletionMode is NonIndexed (nil) or Indexed.
	CompletionMode *batchv1.CompletionMode
	// BackoffLimit is the number of failures before the whole owner fails; nil
	// means 6, or no limit when BackoffLimitPerIndex is set.
	BackoffLimit *int32
	// BackoffLimitPerIndex is the number of failures per index before that index
	// fails (Indexed only; nil means no per-index limit).
	BackoffLimitPerIndex *int32
	// MaxFailedIndexes is the number of failed indexes before the owner fails (with
	// BackoffLimitPerIndex; nil means no limit).
	MaxFailedIndexes *int32
	// PodFailurePolicy decides what a pod failure means (FailJob, FailIndex, Ignore,
	// Count); nil means every failure counts.
	PodFailurePolicy *batchv1.PodFailurePolicy
	// SuccessPolicy declares the owner succeeded early (Indexed only).
	SuccessPolicy *batchv1.SuccessPolicy
	// PodReplacementPolicy says when a replacement starts: TerminatingOrFailed (nil
	// without a PodFailurePolicy) or Failed (nil with one).
	PodReplacementPolicy *batchv1.PodReplacementPolicy
	// Suspend stops every pod and creates none while true.
	Suspend *bool
	// ActiveDeadlineSeconds fails the owner that long after its start time.
	ActiveDeadlineSeconds *int64
	// Selector picks orphan pods to adopt and owned pods to release; nil means
	// neither (only pods whose controller reference has the owner's UID are its).
	Selector *metav1.LabelSelector
	// Template is the pod template of created pods. It is required, and its
	// restartPolicy decides whether container restarts count as failures
	// (OnFailure).
	Template *corev1.PodTemplateSpec
	// ManagedBy names the controller that handles the owner: Compute skips the
	// owner unless it equals Input.ControllerName. Nil means
	// batchv1.JobControllerName for a batch/v1 Job (Input.Owner owner.BatchJob), and
	// any controller for another kind, which has no built-in controller: a custom
	// resource without such a field leaves it nil.
	ManagedBy *string
}

// identity is the object a controller reference to the workload is built from.
func (w *Workload) identity() *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID}
}
