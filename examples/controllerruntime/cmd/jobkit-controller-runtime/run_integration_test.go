package main

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
)

// TestRunServesMetricsAndProbes runs the command against a real API server and, once
// a Job it manages has completed, finds the job_controller_* counters moved on
// /metrics and /healthz and /readyz answering 200.
func TestRunServesMetricsAndProbes(t *testing.T) {
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metrics"}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	metricsAddr, probeAddr := cmdtest.FreeAddr(t), cmdtest.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, cfg), "--workers=2",
			"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=" + probeAddr})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	})
	cmdtest.Check(t, cs, ns.Name, controllerruntime.DefaultManagedBy, metricsAddr, probeAddr)
}
