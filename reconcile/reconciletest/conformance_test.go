package reconciletest_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

func TestClientConformance(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 1})
	reconciletest.RunClientConformance(t, reconciletest.ConformanceFixture{
		Client:    c,
		Namespace: "conformance",
		CreateJob: func(_ context.Context, job *batchv1.Job) (*batchv1.Job, error) { return c.Jobs().Create(job) },
		GetPod:    func(ctx context.Context, ns, name string) (*corev1.Pod, error) { return c.GetPod(ctx, ns, name) },
		GetJob:    func(ctx context.Context, ns, name string) (*batchv1.Job, error) { return c.Jobs().Get(ns, name) },
	})
}
