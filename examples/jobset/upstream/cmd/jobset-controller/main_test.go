package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/upstream/internal/jobsetmod"
)

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown api", args: []string{"--api=batch"}, wantErr: `--api="batch": must be jobset.examples.jobkit.dev or jobset.x-k8s.io`},
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantErr: "flag provided but not defined"},
		{name: "child managed-by without a domain", args: []string{"--api=jobset.x-k8s.io", "--child-managed-by=controller"}, wantErr: `--child-managed-by="controller": must be empty or a domain-prefixed path`},
		{name: "an unknown feature gate", args: []string{"--feature-gates=ElasticJobSet=true"}, wantErr: "unrecognized feature gate: ElasticJobSet (known: InPlaceRestart)"},
		{name: "a feature gate that is not a boolean", args: []string{"--feature-gates=InPlaceRestart=on"}, wantErr: "invalid value of InPlaceRestart=on"},
		{name: "missing kubeconfig", args: []string{"--api=jobset.x-k8s.io", "--kubeconfig", "/nonexistent/kubeconfig"}, wantErr: "loading the cluster configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("run(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// --help is not a failure: run returns flag.ErrHelp, on which main exits 0.
func TestHelpExitsZero(t *testing.T) {
	err := run(t.Context(), []string{"--help"})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(--help) = %v, want flag.ErrHelp", err)
	}
	if code := cmdflags.ExitCode("jobset-controller", err, false, io.Discard); code != 0 {
		t.Errorf("ExitCode(--help) = %d, want 0", code)
	}
}

// leaderWorkers is a JobSet of JobSet's own API as a user writes it, without
// the defaults of JobSet's webhook (none runs here): a leader of one pod and
// two workers of two pods each, which wait for the leader to be ready.
func leaderWorkers(ns, name string, managedBy *string) *jobset.JobSet {
	tmpl := func(pods int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		}}
	}
	return &jobset.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: jobset.JobSetSpec{
			ManagedBy: managedBy,
			ReplicatedJobs: []jobset.ReplicatedJob{
				{Name: "leader", Replicas: 1, Template: tmpl(1)},
				{Name: "workers", Replicas: 2, Template: tmpl(2),
					DependsOn: []jobset.DependsOn{{Name: "leader", Status: jobset.DependencyReady}}},
			},
		},
	}
}

// TestRunServesJobSetsAPI runs the command with --api jobset.x-k8s.io against
// a real API server with JobSet's own CRD (from the module cache), jobkit's
// Job controller running the children and a kubelet under which every pod
// succeeds: a JobSet of JobSet's API completes, its children carry JobSet's
// controller reference (jobset.x-k8s.io/v1alpha2) and names; a JobSet whose
// managedBy names another controller (a real JobSet beside it) is left
// alone.
func TestRunServesJobSetsAPI(t *testing.T) {
	crds, err := jobsetmod.CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{crds}, AddToScheme: jobset.AddToScheme})
	ns, err := envtesting.CreateNamespace(t.Context(), e.Client, "jobsets-")
	if err != nil {
		t.Fatal(err)
	}
	kubelet := scenarios.NewKubelet(e.Clientset, ns)
	kubelet.SetPolicy(func(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() })
	envtesting.Go(t, "the kubelet", func(ctx context.Context) error { kubelet.Run(ctx); return nil })
	const jobController = "tests.jobkit.dev/upstream"
	jobs, err := controllerruntime.Start(t.Context(), e.Config, controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(jobController), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop() })

	probeAddr := cmdtest.FreeAddr(t)
	args := []string{"--api=jobset.x-k8s.io", "--kubeconfig=" + cmdtest.WriteKubeconfig(t, e.Config),
		"--health-probe-bind-address=" + probeAddr, "--child-managed-by=" + jobController}
	envtesting.Go(t, "run()", func(ctx context.Context) error { return run(ctx, args) })

	ours := leaderWorkers(ns, "ours", nil)
	theirs := leaderWorkers(ns, "theirs", ptr.To("example.com/another-jobset-controller"))
	for _, js := range []*jobset.JobSet{ours, theirs} {
		if err := e.Client.Create(t.Context(), js); err != nil {
			t.Fatalf("creating JobSet %s: %v", js.Name, err)
		}
	}
	got := &jobset.JobSet{}
	poll := envtesting.Poll{Timeout: 60 * time.Second, Every: 50 * time.Millisecond}
	poll.Eventually(t, "JobSet ours to finish", func() (bool, string) {
		if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(ours), got); err != nil {
			t.Fatal(err)
		}
		return got.Status.TerminalState != "", fmt.Sprintf("%+v", got.Status)
	})
	if got.Status.TerminalState != string(jobset.JobSetCompleted) || got.Status.Restarts != 0 {
		t.Errorf("final status = %+v, want Completed with no restart", got.Status)
	}
	var children batchv1.JobList
	if err := e.Client.List(t.Context(), &children, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range children.Items {
		names = append(names, j.Name)
		ref := metav1.GetControllerOf(&j)
		if ref == nil || ref.APIVersion != "jobset.x-k8s.io/v1alpha2" || ref.Kind != "JobSet" || ref.Name != "ours" {
			t.Errorf("Job %s: controller reference %+v, want JobSet ours of jobset.x-k8s.io/v1alpha2", j.Name, ref)
		}
	}
	if want := "[ours-leader-0 ours-workers-0 ours-workers-1]"; fmt.Sprint(names) != want {
		t.Errorf("child Jobs = %v, want %s", names, want)
	}
	if err := e.Client.Get(t.Context(), client.ObjectKeyFromObject(theirs), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 || got.Status.ReplicatedJobsStatus != nil {
		t.Errorf("JobSet theirs, managed by another controller: status %+v, want none written", got.Status)
	}
	envtesting.RequireHTTPStatus(t, "http://"+probeAddr+"/readyz", http.StatusOK)
}

// --feature-gates=InPlaceRestart=true turns on the controller's in-place
// restart (JobSet's alpha gate of the same name) and the JobSets are
// validated under it; it is off by default.
func TestFeatureGateInPlaceRestart(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{args: nil},
		{args: []string{"--feature-gates=InPlaceRestart=true"}, want: true},
		{args: []string{"--feature-gates=InPlaceRestart=false"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		gates := cmdflags.NewFeatureGates(map[string]bool{gateInPlaceRestart: false})
		fs.Var(gates, "feature-gates", "")
		f, err := cmdflags.Register(fs, cmdflags.Defaults{Objects: "JobSets", ManagedBy: "example.com/x", Workers: 1}).Parse(tc.args)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.args, err)
		}
		if got := options(f, "", gates).InPlaceRestart; got != tc.want {
			t.Errorf("options(%q).InPlaceRestart = %t, want %t", tc.args, got, tc.want)
		}
		// The JobSets are validated under the gate: off, one under
		// InPlaceRestart is refused, as JobSet's webhook refuses it.
		if got := options(f, "", gates).FeatureGates(); !maps.Equal(got, map[string]bool{"InPlaceRestart": tc.want}) {
			t.Errorf("options(%q).FeatureGates() = %v, want InPlaceRestart %t", tc.args, got, tc.want)
		}
	}
}
