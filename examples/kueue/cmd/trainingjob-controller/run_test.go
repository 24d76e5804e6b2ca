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
	"k8s.io/apimachinery/pkg/api/resource"
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

// TestRunQueuesTheSamples runs the command with --kueue and the deploy's Kueue
// Configuration against a real API server where Kueue's own controllers and
// scheduler run (a ClusterQueue of 9 CPUs), and queues the two samples, every
// container asking for one CPU (Kueue places only the pods that ask for a
// resource of the flavour): each waits suspended, is one Workload (the
// Job-shaped run: a pod set "main" of its 4 parallel pods; the run with a
// launcher: a pod set per role, workers=4 and launcher=1), is admitted, runs
// every pod with the flavour's node selector, and finishes (the Job-shaped run
// Complete with its 8 workers succeeded). One run of the command serves both:
// its controllers' names are the process's.
func TestRunQueuesTheSamples(t *testing.T) {
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
	if err := kueuetest.Queues(t.Context(), e.Client, ns, ns, "9"); err != nil {
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
		"--kueue", "--kueue-config=" + filepath.Join("..", "..", "config", "kueue", "kueue-config.yaml")}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	samples := []struct {
		path, wantSets string
	}{
		{filepath.Join("..", "..", "config", "samples", "trainingjob.yaml"), "[main=4]"},
		{filepath.Join("..", "..", "..", "trainingjob", "config", "samples", "trainingjob-launcher.yaml"), "[workers=4 launcher=1]"},
	}
	oneCPU := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	var tjs []*v1alpha1.TrainingJob
	for _, sample := range samples {
		tj := &v1alpha1.TrainingJob{}
		if err := envtesting.ReadYAML(sample.path, tj); err != nil {
			t.Fatal(err)
		}
		tj.Namespace, tj.Spec.Suspend = ns, ptr.To(true)
		if tj.Labels == nil {
			tj.Labels = map[string]string{}
		}
		tj.Labels[constants.QueueLabel] = "lq"
		for i := range tj.Spec.Template.Spec.Containers {
			tj.Spec.Template.Spec.Containers[i].Resources = oneCPU
		}
		if l := tj.Spec.Launcher; l != nil {
			for i := range l.Template.Spec.Containers {
				l.Template.Spec.Containers[i].Resources = oneCPU
			}
		}
		if err := e.Client.Create(t.Context(), tj); err != nil {
			t.Fatalf("creating the sample %s: %v", sample.path, err)
		}
		tjs = append(tjs, tj)
	}
	for i, tj := range tjs {
		var sets []string
		envtesting.Poll{Timeout: 60 * time.Second, Every: 100 * time.Millisecond}.Eventually(t, tj.Name+" admitted", func() (bool, string) {
			ok, s, err := kueuetest.Admitted(t.Context(), e.Client, ns, "TrainingJob", tj.Name)
			if err != nil {
				t.Fatal(err)
			}
			sets = s
			return ok, fmt.Sprint(s)
		})
		if fmt.Sprint(sets) != samples[i].wantSets {
			t.Errorf("%s: the Workload's pod sets = %v, want %s", tj.Name, sets, samples[i].wantSets)
		}
		got := &v1alpha1.TrainingJob{}
		envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}.Eventually(t, tj.Name+" to finish", func() (bool, string) {
			if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(tj), got); err != nil {
				t.Fatal(err)
			}
			return controller.Finished(got), fmt.Sprintf("%+v", got.Status)
		})
		if i == 0 && (got.Status.Succeeded != 8 || got.Status.Conditions[len(got.Status.Conditions)-1].Type != "Complete") {
			t.Errorf("%s: final status = %+v, want Complete with 8 succeeded", tj.Name, got.Status)
		}
	}
	var pods corev1.PodList
	if err := e.Client.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) < 9 {
		t.Fatalf("%d pods of the samples found, want at least 9 (8 workers, 4 more workers and a launcher)", len(pods.Items))
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
		{name: "config without --kueue", args: []string{"--kueue-config=" + filepath.Join("..", "..", "config", "kueue", "kueue-config.yaml")}, want: "--kueue-config is set without --kueue"},
		{name: "not a Configuration", args: []string{"--kueue", "--kueue-config=" + filepath.Join("..", "..", "config", "kueue", "rbac.yaml")}, want: "--kueue-config="},
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
