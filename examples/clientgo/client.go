package clientgo

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/jobkit/jobkit/reconcile"
)

// Client is a reconcile.Client over a client-go clientset: each method is one API
// call, and the API server's errors are returned as client-go gives them (the
// k8s.io/apimachinery/pkg/api/errors predicates apply). It is safe for concurrent use.
type Client struct {
	cs kubernetes.Interface
}

var _ reconcile.Client = (*Client)(nil)

// NewClient returns a Client that calls the API server through cs.
func NewClient(cs kubernetes.Interface) *Client { return &Client{cs: cs} }

// CreatePod creates pod in its namespace: POST /api/v1/namespaces/{ns}/pods.
func (c *Client) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return c.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// DeletePod deletes the pod namespace/name with its UID as a precondition (none when
// uid is empty) and the pod's own grace period. A pod with another UID yields
// Conflict, a missing pod NotFound.
func (c *Client) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	var opts metav1.DeleteOptions
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	return c.cs.CoreV1().Pods(namespace).Delete(ctx, name, opts)
}

// PatchPod sends a patch of type pt to the pod namespace/name and returns the pod as
// stored.
func (c *Client) PatchPod(ctx context.Context, namespace, name string, pt types.PatchType, data []byte) (*corev1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Patch(ctx, name, pt, data, metav1.PatchOptions{})
}

// GetPod reads the pod namespace/name from the API server: GET
// /api/v1/namespaces/{ns}/pods/{name}.
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateJobStatus replaces the status of job through the status subresource (PUT
// .../jobs/{name}/status); job.ResourceVersion is the optimistic-concurrency
// precondition.
func (c *Client) UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	return c.cs.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
}
