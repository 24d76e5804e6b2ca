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
	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

// TestRunCompletesTheSample runs the command against a real API server with the
// CRD installed, jobkit's Job controller running the children it creates
// (--child-managed-by), and a kubelet under which every pod succeeds: the
// sample (a leader, and three workers that wait for it) completes; /readyz
// answers 200.
func TestRunCompletesTheSample(t *testing.T) {
	env, cfg, err := testenv.Start(filepath.Join("..", "..", "config", "crd"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha2.AddToScheme(scheme)); err != nil {
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

	const jobController = "tests.jobkit.dev/sample"
	jobs, err := controllerruntime.Start(t.Context(), cfg, controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(jobController), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop() })

	probeAddr := cmdtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, cfg), "--health-probe-bind-address=" + probeAddr,
			"--child-managed-by=" + jobController})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	})

	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", "jobset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js := &v1alpha2.JobSet{}
	if err := yaml.UnmarshalStrict(data, js); err != nil {
		t.Fatal(err)
	}
	js.Namespace = ns.Name
	if err := k8s.Create(t.Context(), js); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := &v1alpha2.JobSet{}
		if err := k8s.Get(t.Context(), client.ObjectKeyFromObject(js), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.TerminalState != "" {
			if got.Status.TerminalState != v1alpha2.Completed || got.Status.Restarts != 0 {
				t.Errorf("final status = %+v, want Completed with no restart", got.Status)
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
