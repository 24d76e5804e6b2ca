package reconcile

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/plan"
)

// workloadKey returns the key of w in the Reconciler's stores.
func workloadKey(w *plan.Workload) string { return Key(w.Namespace, w.Name) }

// identity is the object controller references to w are built from.
func identity(w *plan.Workload) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID}
}

// StatusWriter writes the status of an owner. It is the only call of a sync that
// knows the owner's type; pods go through PodClient.
type StatusWriter interface {
	// WriteStatus writes status as the status of w's object through its status
	// subresource, with w.ResourceVersion as the optimistic-concurrency
	// precondition, and returns the owner as stored (its new resourceVersion above
	// all), converted back to a plan.Workload. A stale resourceVersion must yield the API
	// server's Conflict error, which ends the sync with Report.Retry.
	WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error)
}

// StatusWriterFunc adapts a function to StatusWriter.
type StatusWriterFunc func(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error)

// WriteStatus calls f.
func (f StatusWriterFunc) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	return f(ctx, w, status)
}

// PodClient is what the Reconciler asks of the API server about pods, whatever owns
// them. Implementations return the errors of k8s.io/apimachinery/pkg/api/errors, as
// Client's do.
type PodClient interface {
	// CreatePod creates pod (its Name may be empty when GenerateName is set) and
	// returns the pod as stored.
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	// DeletePod deletes a pod with the precondition that its UID is uid (an empty
	// uid means no precondition). A pod with another UID yields a Conflict error, a
	// missing pod NotFound.
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
	// PatchPod patches a pod's metadata and returns the pod as stored; pt is
	// types.StrategicMergePatchType for every patch the Reconciler sends (finalizer
	// removal, adoption, release). The Reconciler sends its later writes of a sync
	// to a pod it adopted with the returned resourceVersion; a nil pod (or one
	// without a resourceVersion) only costs those writes a Conflict.
	PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error)
	// GetPod reads the pod namespace/name from the API server itself, not from a
	// cache; a missing pod is a NotFound error. The Reconciler reads a pod only
	// when the creation of a pod it named was refused with AlreadyExists, to learn
	// whose pod holds the name (its own earlier creation, or a pod that is not the
	// owner's, whose name it then gives up): a cached read could miss its own pod.
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// OwnerReader reads the owner namespace/name from the API server, not from a cache
// (see Config.ReadOwner), converted onto the workload (of which a sync about to
// adopt reads UID and Deleting, and the orphan cleanup UID, Spec.ManagedBy and
// Status). It returns nil, and no error, when the owner does not exist.
type OwnerReader func(ctx context.Context, namespace, name string) (*plan.Workload, error)

// ObjectOwnerReader is the OwnerReader over get, a live read of the owner that
// returns the API server's errors (NotFound for a missing owner), and convert, the
// owner's conversion onto the workload (the one Sync is given); a conversion error
// is the read's error.
func ObjectOwnerReader[T metav1.Object](get func(ctx context.Context, namespace, name string) (T, error), convert func(T) (*plan.Workload, error)) OwnerReader {
	return func(ctx context.Context, namespace, name string) (*plan.Workload, error) {
		o, err := get(ctx, namespace, name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return convert(o)
	}
}
