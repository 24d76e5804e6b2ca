package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
)

// TestRun runs the command against a real API server, as a user would, with
// leader election: it takes the Lease and starts a RunJob's pod.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	env, cfg, err := testenv.Start(filepath.Join("..", "..", "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig=" + kubeconfig, "--leader-elect", "--leader-elect-namespace=default",
			"--namespace=default", "--max-pending=1", "--queue=default=1"}, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run() = %v after cancel, want nil", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("run() did not return 30s after its context was cancelled")
		}
	})

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	rj := &v1alpha1.RunJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "smoke"},
		Spec: v1alpha1.RunJobSpec{JobName: "smoke", QueueName: "default",
			PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}
	if err := c.Create(ctx, rj); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rj), rj); err != nil {
			t.Fatal(err)
		}
		if rj.Status.State == v1alpha1.StatePending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RunJob not pending after 30s: %+v", rj.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "plank.examples.jobkit.dev"}, &lease); err != nil {
		t.Fatalf("the leader election Lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("Lease holder = %v, want this process", lease.Spec.HolderIdentity)
	}
}
