package clientgo_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// TestClientConformance runs the reconcile.Client conformance suite against a real
// kube-apiserver through the client-go adapter.
func TestClientConformance(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(apiServer(t))
	ns := newNamespace(t, cs, "conformance-")
	reconciletest.RunClientConformance(t, reconciletest.ConformanceFixture{
		Client:    clientgo.NewClient(cs),
		Namespace: ns,
		CreateJob: func(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
			return cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{})
		},
		GetPod: func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
			return cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		GetJob: func(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
			return cs.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		},
	})
}

func newNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}
