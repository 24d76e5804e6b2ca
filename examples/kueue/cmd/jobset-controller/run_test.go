package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueueapi "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/kueue/internal/kueuetest"
)

// TestRunQueuesTheSample runs the command with --kueue against a real API
// server where Kueue's own controllers and scheduler run, and jobkit's Job
// controller runs the children (--child-managed-by): the queued sample
// JobSet (a leader, and three workers of two pods) is one Workload of a pod
// set per replicated job (leader=1, workers=6), waits suspended for a
// ClusterQueue of 7 CPUs, is admitted, its children's pods run with the
// flavour's node selector (merged into the JobSet's own templates), and it
// completes.
func TestRunQueuesTheSample(t *testing.T) {
	crds, err := kueuetest.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "..", "jobset", "config", "crd"), crds},
		AddToScheme: func(s *runtime.Scheme) error { return errors.Join(v1alpha2.AddToScheme(s), kueueapi.AddToScheme(s)) }})
	ns, err := envtesting.CreateNamespace(t.Context(), e.Client, "queued-")
	if err != nil {
		t.Fatal(err)
	}
	if err := kueuetest.Queues(t.Context(), e.Client, ns, ns, "7"); err != nil {
		t.Fatal(err)
	}
	envtesting.Go(t, "Kueue", func(ctx context.Context) error {
		done := make(chan error, 1)
		if err := kueuetest.Run(ctx, e.Config, done); err != nil {
			return err
		}
		return <-done
	})
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

	args := []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, e.Config), "--health-probe-bind-address=" + cmdtest.FreeAddr(t),
		"--child-managed-by=" + jobController, "--kueue", "--kueue-config=" + filepath.Join("..", "..", "config", "kueue", "kueue-config.yaml")}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	js := &v1alpha2.JobSet{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "jobset.yaml"), js); err != nil {
		t.Fatal(err)
	}
	js.Namespace, js.Labels[constants.QueueLabel] = ns, "lq"
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("the queued sample is not created suspended")
	}
	if err := e.Client.Create(t.Context(), js); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	var sets []string
	envtesting.Poll{Timeout: 60 * time.Second, Every: 100 * time.Millisecond}.Eventually(t, "the sample admitted", func() (bool, string) {
		ok, s, err := kueuetest.Admitted(t.Context(), e.Client, ns, "JobSet", js.Name)
		if err != nil {
			t.Fatal(err)
		}
		sets = s
		return ok, fmt.Sprint(s)
	})
	if fmt.Sprint(sets) != "[leader=1 workers=6]" {
		t.Errorf("the Workload's pod sets = %v, want [leader=1 workers=6]", sets)
	}
	got := &v1alpha2.JobSet{}
	envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}.Eventually(t, "the sample to finish", func() (bool, string) {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(js), got); err != nil {
			t.Fatal(err)
		}
		return got.Status.TerminalState != "", fmt.Sprintf("%+v", got.Status)
	})
	if got.Status.TerminalState != v1alpha2.Completed {
		t.Errorf("final status = %+v, want Completed", got.Status)
	}
	for _, r := range got.Spec.ReplicatedJobs {
		if sel := r.Template.Spec.Template.Spec.NodeSelector; sel["pool"] != ns {
			t.Errorf("replicated job %s's template node selector %v, want the flavour's pool=%s", r.Name, sel, ns)
		}
	}
	var pods corev1.PodList
	if err := e.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatal("no pod of the sample found")
	}
	for _, p := range pods.Items {
		if p.Spec.NodeSelector["pool"] != ns {
			t.Errorf("pod %s ran with node selector %v, want the flavour's pool=%s", p.Name, p.Spec.NodeSelector, ns)
		}
	}
}

// A Configuration without --kueue is refused before anything connects.
func TestRunRefusesKueueConfigAlone(t *testing.T) {
	err := run(t.Context(), []string{"--kueue-config=" + filepath.Join("..", "..", "config", "kueue", "kueue-config.yaml")})
	if err == nil || !strings.Contains(err.Error(), "--kueue-config is set without --kueue") {
		t.Errorf("run() = %v, want the error of --kueue-config without --kueue", err)
	}
}
