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

	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// TestRunCompletesTheSample runs the command against a real API server with the
// CRD installed, creates the sample (eight workers, six successes complete the run)
// and, with every worker succeeding, waits for the run to complete; /readyz
// answers 200.
func TestRunCompletesTheSample(t *testing.T) {
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "config", "crd")}, AddToScheme: v1alpha1.AddToScheme})
	ns, err := envtesting.CreateNamespace(t.Context(), e.Client, "sample-")
	if err != nil {
		t.Fatal(err)
	}
	kubelet := scenarios.NewKubelet(e.Clientset, ns)
	kubelet.SetPolicy(func(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() })
	envtesting.Go(t, "the kubelet", func(ctx context.Context) error { kubelet.Run(ctx); return nil })

	probeAddr := cmdtest.FreeAddr(t)
	args := []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, e.Config), "--health-probe-bind-address=" + probeAddr}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	tj := &v1alpha1.TrainingJob{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "trainingjob.yaml"), tj); err != nil {
		t.Fatal(err)
	}
	tj.Namespace = ns
	if err := e.Client.Create(t.Context(), tj); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	got := &v1alpha1.TrainingJob{}
	envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}.Eventually(t, "the sample to finish", func() (bool, string) {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(tj), got); err != nil {
			t.Fatal(err)
		}
		return controller.Finished(got), fmt.Sprintf("%+v", got.Status)
	})
	// Six successes complete the run; workers that succeed in the same moment
	// count too (how many is a matter of timing), those still running are removed
	// without being counted.
	if s := got.Status; s.Succeeded < 6 || s.Succeeded > 8 || s.Failed != 0 || s.Conditions[len(s.Conditions)-1].Type != "Complete" {
		t.Errorf("final status = %+v, want Complete with 6 to 8 succeeded, none failed", s)
	}
	envtesting.RequireHTTPStatus(t, "http://"+probeAddr+"/readyz", http.StatusOK)
}
