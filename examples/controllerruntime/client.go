package controllerruntime

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/reconcile"
)

// Client is a reconcile.Client over a controller-runtime client.Client. Every call
// goes to the API server: controller-runtime clients write directly, and GetPod
// reads through a reader that does not use the cache. Its arguments are never
// modified: each call works on a copy, because the objects come from the informer
// cache.
type Client struct {
	c    client.Client
	live client.Reader
}

var _ reconcile.Client = (*Client)(nil)

// NewClient returns a reconcile.Client that writes through c and reads a pod
// (GetPod) through live, which must read from the API server, not from a cache: a
// manager's GetAPIReader(). A nil live reads through c, which must then be a
// client without a cache (client.New).
func NewClient(c client.Client, live client.Reader) *Client {
	if live == nil {
		live = c
	}
	return &Client{c: c, live: live}
}

// GetPod reads the pod namespace/name through the live reader.
func (a *Client) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	if err := a.live.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreatePod creates a copy of pod and returns the pod as stored.
func (a *Client) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	out := pod.DeepCopy()
	if err := a.c.Create(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeletePod deletes the pod namespace/name, with uid as a precondition when it is
// not empty (the API server answers Conflict when another pod has taken the name).
func (a *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	var opts []client.DeleteOption
	if uid != "" {
		opts = append(opts, client.Preconditions{UID: &uid})
	}
	return a.c.Delete(ctx, pod, opts...)
}

// PatchPod sends data as a patch of type pt and returns the pod as stored.
func (a *Client) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error) {
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := a.c.Patch(ctx, out, client.RawPatch(pt, data)); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateJobStatus writes job.Status through the status subresource, with
// job.ResourceVersion as the precondition, and returns the Job as stored.
func (a *Client) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	out := job.DeepCopy()
	if err := a.c.Status().Update(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}
