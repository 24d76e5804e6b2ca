package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

// TestRunCompletesTheSample runs the command against a real API server with the
// CRD installed, jobkit's Job controller running the children it creates
// (--child-managed-by), and a kubelet under which every pod succeeds: the
// sample (a leader, and three workers that wait for it) completes; /readyz
// answers 200.
func TestRunCompletesTheSample(t *testing.T) {
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "config", "crd")}, AddToScheme: v1alpha2.AddToScheme})
	ns, err := envtesting.CreateNamespace(t.Context(), e.Client, "sample-")
	if err != nil {
		t.Fatal(err)
	}
	kubelet := scenarios.NewKubelet(e.Clientset, ns)
	kubelet.SetPolicy(func(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() })
	envtesting.Go(t, "the kubelet", func(ctx context.Context) error { kubelet.Run(ctx); return nil })

	const jobController = "tests.jobkit.dev/sample"
	jobs, err := controllerruntime.Start(t.Context(), e.Config, controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(jobController), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop() })

	probeAddr := cmdtest.FreeAddr(t)
	args := []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, e.Config), "--health-probe-bind-address=" + probeAddr,
		"--child-managed-by=" + jobController}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	js := &v1alpha2.JobSet{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "jobset.yaml"), js); err != nil {
		t.Fatal(err)
	}
	js.Namespace = ns
	if err := e.Client.Create(t.Context(), js); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	got := &v1alpha2.JobSet{}
	envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}.Eventually(t, "the sample to finish", func() (bool, string) {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(js), got); err != nil {
			t.Fatal(err)
		}
		return got.Status.TerminalState != "", fmt.Sprintf("%+v", got.Status)
	})
	if got.Status.TerminalState != v1alpha2.Completed || got.Status.Restarts != 0 {
		t.Errorf("final status = %+v, want Completed with no restart", got.Status)
	}
	envtesting.RequireHTTPStatus(t, "http://"+probeAddr+"/readyz", http.StatusOK)
}
