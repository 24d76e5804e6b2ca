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

	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/kueue/internal/kueuetest"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// TestRunQueuesTheSample runs the command with --kueue and the deploy's Kueue
// Configuration against a real API server where Kueue's own controllers and
// scheduler run: the queued sample (eight workers, four at a time, one CPU
// each) waits suspended for a ClusterQueue of 4 CPUs, is one Workload of a pod
// set "main" of 4 pods, admitted, runs its pods with the flavour's node
// selector and completes.
func TestRunQueuesTheSample(t *testing.T) {
	crds, err := kueuetest.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "..", "trainingjob", "config", "crd"), crds},
		AddToScheme: func(s *runtime.Scheme) error { return errors.Join(v1alpha1.AddToScheme(s), kueueapi.AddToScheme(s)) }})
	ns, err := envtesting.CreateNamespace(t.Context(), e.Client, "queued-")
	if err != nil {
		t.Fatal(err)
	}
	if err := kueuetest.Queues(t.Context(), e.Client, ns, ns, "4"); err != nil {
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

	args := []string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, e.Config), "--health-probe-bind-address=" + cmdtest.FreeAddr(t),
		"--kueue", "--kueue-config=" + filepath.Join("..", "..", "config", "kueue-config.yaml")}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	tj := &v1alpha1.TrainingJob{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "trainingjob.yaml"), tj); err != nil {
		t.Fatal(err)
	}
	tj.Namespace, tj.Labels[constants.QueueLabel] = ns, "lq"
	if !ptr.Deref(tj.Spec.Suspend, false) {
		t.Fatal("the queued sample is not created suspended")
	}
	if err := e.Client.Create(t.Context(), tj); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	var sets []string
	envtesting.Poll{Timeout: 60 * time.Second, Every: 100 * time.Millisecond}.Eventually(t, "the sample admitted", func() (bool, string) {
		ok, s, err := kueuetest.Admitted(t.Context(), e.Client, ns, "TrainingJob", tj.Name)
		if err != nil {
			t.Fatal(err)
		}
		sets = s
		return ok, fmt.Sprint(s)
	})
	if fmt.Sprint(sets) != "[main=4]" {
		t.Errorf("the Workload's pod sets = %v, want [main=4]", sets)
	}
	got := &v1alpha1.TrainingJob{}
	envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}.Eventually(t, "the sample to finish", func() (bool, string) {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(tj), got); err != nil {
			t.Fatal(err)
		}
		return controller.Finished(got), fmt.Sprintf("%+v", got.Status)
	})
	if got.Status.Succeeded != 8 || got.Status.Conditions[len(got.Status.Conditions)-1].Type != "Complete" {
		t.Errorf("final status = %+v, want Complete with 8 succeeded", got.Status)
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

// The Kueue flags are checked before anything connects: a Configuration
// without --kueue, or a file that is not one, is an error naming the flag.
func TestRunRefusesKueueFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "config without --kueue", args: []string{"--kueue-config=" + filepath.Join("..", "..", "config", "kueue-config.yaml")}, want: "--kueue-config is set without --kueue"},
		{name: "not a Configuration", args: []string{"--kueue", "--kueue-config=" + filepath.Join("..", "..", "config", "rbac.yaml")}, want: "--kueue-config="},
		{name: "missing file", args: []string{"--kueue", "--kueue-config=nowhere.yaml"}, want: "--kueue-config: open nowhere.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%v) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
