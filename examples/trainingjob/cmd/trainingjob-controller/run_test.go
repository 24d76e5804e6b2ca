package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// TestRunCompletesTheSample runs the command against a real API server with the
// CRD installed, creates the sample (eight workers, six successes complete the run)
// and, with every worker succeeding, waits for the run to complete; /readyz
// answers 200.
func TestRunCompletesTheSample(t *testing.T) {
	env, cfg, err := testenv.Start(filepath.Join("..", "..", "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sample"}}
	if err := k8s.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	kubelet := scenarios.NewKubelet(kubernetes.NewForConfigOrDie(cfg), ns.Name)
	kubelet.SetPolicy(func(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() })
	kctx, stopKubelet := context.WithCancel(context.Background())
	kdone := make(chan struct{})
	go func() { kubelet.Run(kctx); close(kdone) }()
	t.Cleanup(func() { stopKubelet(); <-kdone })

	probeAddr := cmdtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, cfg), "--health-probe-bind-address=" + probeAddr})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	})

	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "trainingjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tj := &v1alpha1.TrainingJob{}
	if err := yaml.UnmarshalStrict(data, tj); err != nil {
		t.Fatal(err)
	}
	tj.Namespace = ns.Name
	if err := k8s.Create(t.Context(), tj); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := &v1alpha1.TrainingJob{}
		if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(tj), got); err != nil {
			t.Fatal(err)
		}
		if controller.Finished(got) {
			s := got.Status
			// Six successes complete the run; workers that succeed in the same
			// moment count too (how many is a matter of timing), those still
			// running are removed without being counted.
			if s.Succeeded < 6 || s.Succeeded > 8 || s.Failed != 0 || s.Conditions[len(s.Conditions)-1].Type != "Complete" {
				t.Errorf("final status = %+v, want Complete with 6 to 8 succeeded, none failed", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sample did not finish: %+v", got.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/readyz", probeAddr))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d, want 200", resp.StatusCode)
	}
}
