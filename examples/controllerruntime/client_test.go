package controllerruntime_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The adapter behaves as the Reconciler expects of the API server, against a real
// kube-apiserver.
func TestClientConformance(t *testing.T) {
	c := directClient(t)
	ns := namespace(t, c, "cr-conformance")
	reconciletest.RunClientConformance(t, reconciletest.ConformanceFixture{
		Client:    controllerruntime.NewClient(c, nil),
		Namespace: ns,
		CreateJob: func(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
			out := job.DeepCopy()
			return out, c.Create(ctx, out)
		},
		GetPod: func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
			pod := &corev1.Pod{}
			return pod, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pod)
		},
		GetJob: func(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
			job := &batchv1.Job{}
			return job, c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, job)
		},
	})
}
