package controllerruntime

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// apiClient is a reconcile.Client over a controller-runtime client.Client. Every
// call goes to the API server: controller-runtime clients write directly, and
// GetPod reads through a reader that does not use the cache. Its arguments are
// never modified: each call works on a copy, because the objects come from the
// informer cache.
type apiClient struct {
	c    client.Client
	live client.Reader
}

var _ reconcile.Client = (*apiClient)(nil)

// newAPIClient writes through c and reads a pod (GetPod) through live, which must
// read from the API server (a manager's GetAPIReader()); nil reads through c,
// which must then have no cache.
func newAPIClient(c client.Client, live client.Reader) *apiClient {
	if live == nil {
		live = c
	}
	return &apiClient{c: c, live: live}
}

func (a *apiClient) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	if err := a.live.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *apiClient) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	out := pod.DeepCopy()
	if err := a.c.Create(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *apiClient) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	var opts []client.DeleteOption
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	return a.c.Delete(ctx, pod, opts...)
}

func (a *apiClient) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error) {
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := a.c.Patch(ctx, out, client.RawPatch(pt, data)); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateJobStatus completes reconcile.Client, so that the conformance suite runs
// over apiClient; Setup writes every owner's status through statusWriter.
func (a *apiClient) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	out := job.DeepCopy()
	if err := a.c.Status().Update(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// statusWriter is the reconcile.StatusWriter of owners T: it writes a copy of the
// owner in Workload.Object with the new status (Type.SetStatus) through the status
// subresource, with Workload.ResourceVersion as the precondition (a stale one gets
// the API server's Conflict), and converts the owner as stored.
type statusWriter[T client.Object] struct {
	c   client.Client
	typ reconcile.Type[T]
}

func (s statusWriter[T]) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	obj, ok := w.Object.(T)
	if !ok {
		return nil, fmt.Errorf("%w: Workload.Object is a %T, not a %T", reconcile.ErrInvalidArgument, w.Object, s.typ.New())
	}
	out, ok := obj.DeepCopyObject().(T)
	if !ok {
		return nil, fmt.Errorf("%w: a copy of %T is a %T", reconcile.ErrInvalidArgument, obj, obj.DeepCopyObject())
	}
	out.SetResourceVersion(w.ResourceVersion)
	s.typ.SetStatus(out, status)
	if err := s.c.Status().Update(ctx, out); err != nil {
		return nil, err
	}
	return s.typ.Workload(out)
}
