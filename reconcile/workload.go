package reconcile

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

// Workload is an owner of pods as the Reconciler syncs it: what plan reads (identity,
// spec in Job terms, status) plus the two facts the Reconciler needs to write the
// status back and record events. A batch/v1 Job is one (JobWorkload); a custom
// resource's controller converts its own object (see examples/trainingjob).
type Workload struct {
	plan.Workload
	// ResourceVersion is the owner's resourceVersion as read: the precondition of
	// its status write, and how the Reconciler tells a cache that has not caught up
	// with its last write.
	ResourceVersion string
	// Object is the owner object as read. Events are recorded on it, and a
	// StatusWriter starts from it. Required.
	Object runtime.Object
	// Backoff, when not zero, is this owner's pod failure backoff (a resource that
	// lets its users set the retry delays); zero means Config.Backoff. Its zero
	// fields mean the defaults, as in Config.Backoff.
	Backoff plainbackoff.Policy
}

// JobWorkload presents a batch/v1 Job as a Workload (plan.JobWorkload, with the
// Job's resourceVersion and the Job itself as Object). It points into job: do not
// modify job while the Workload is in use.
func JobWorkload(job *batchv1.Job) *Workload {
	return &Workload{Workload: plan.JobWorkload(job), ResourceVersion: job.ResourceVersion, Object: job}
}

// key returns the key of w in the Reconciler's stores.
func (w *Workload) key() string { return KeyFor(w.Namespace, w.Name) }

// identity is the object controller references to w are built from.
func (w *Workload) identity() *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: w.UID}
}

// StatusWriter writes the status of an owner. It is the only call of a sync that
// knows the owner's type; pods go through PodClient.
type StatusWriter interface {
	// WriteStatus writes status as the status of w's object through its status
	// subresource, with w.ResourceVersion as the optimistic-concurrency
	// precondition, and returns the owner as stored (its new resourceVersion above
	// all), converted back to a Workload. A stale resourceVersion must yield the API
	// server's Conflict error, which ends the sync with Result.Requeue.
	WriteStatus(ctx context.Context, w *Workload, status batchv1.JobStatus) (*Workload, error)
}

// StatusWriterFunc adapts a function to StatusWriter.
type StatusWriterFunc func(ctx context.Context, w *Workload, status batchv1.JobStatus) (*Workload, error)

// WriteStatus calls f.
func (f StatusWriterFunc) WriteStatus(ctx context.Context, w *Workload, status batchv1.JobStatus) (*Workload, error) {
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

// JobStatusUpdater is the status call of a Client: what JobStatusWriter needs.
type JobStatusUpdater interface {
	UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error)
}

// JobStatusWriter is the StatusWriter of batch/v1 Jobs: it writes through
// UpdateJobStatus the Job that w's Object holds, with the new status.
func JobStatusWriter(c JobStatusUpdater) StatusWriter { return jobStatusWriter{c} }

type jobStatusWriter struct{ c JobStatusUpdater }

func (j jobStatusWriter) WriteStatus(ctx context.Context, w *Workload, status batchv1.JobStatus) (*Workload, error) {
	job, ok := w.Object.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("%w: JobStatusWriter: Workload.Object is a %T, not a *batchv1.Job", ErrInvalidArgument, w.Object)
	}
	job = job.DeepCopy()
	job.Status = status
	out, err := j.c.UpdateJobStatus(ctx, job)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = job
	}
	return JobWorkload(out), nil
}

// OwnerReader reads the owner namespace/name from the API server, not from a cache
// (see Config.ReadOwner). It returns nil, and no error, when the owner does not
// exist.
type OwnerReader func(ctx context.Context, namespace, name string) (*LiveOwner, error)

// LiveOwner is what an OwnerReader found.
type LiveOwner struct {
	// UID is the owner's UID: another one means the owner was deleted and
	// recreated under its name.
	UID types.UID
	// Deleting is true when the owner has a deletionTimestamp.
	Deleting bool
}

// ObjectOwnerReader is the OwnerReader over get, a live read of the owner that
// returns the API server's errors (NotFound for a missing owner): the owner's UID
// and deletionTimestamp are all it reads.
func ObjectOwnerReader[T metav1.Object](get func(ctx context.Context, namespace, name string) (T, error)) OwnerReader {
	return func(ctx context.Context, namespace, name string) (*LiveOwner, error) {
		o, err := get(ctx, namespace, name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &LiveOwner{UID: o.GetUID(), Deleting: o.GetDeletionTimestamp() != nil}, nil
	}
}

// JobOwnerReader is the OwnerReader of batch/v1 Jobs over get (ObjectOwnerReader).
func JobOwnerReader(get func(ctx context.Context, namespace, name string) (*batchv1.Job, error)) OwnerReader {
	return ObjectOwnerReader(get)
}
