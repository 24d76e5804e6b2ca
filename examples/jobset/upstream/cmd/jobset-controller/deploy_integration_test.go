package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/deploytest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
	"github.com/jobkit/jobkit/examples/jobset/upstream/internal/jobsetmod"
)

// deployChildren is the spec.managedBy of the child Jobs in TestDeployedRBAC:
// jobkit's Job controller runs them, in the test's process.
const deployChildren = "tests.jobkit.dev/deployed-children"

// TestDeployedRBAC runs the command with the args of its Deployment
// (config/default: --api jobset.x-k8s.io) as the service account of that base,
// holding only the RBAC the base renders (generated from rbac.go's
// +kubebuilder:rbac markers), on an API server with JobSet's own CRD: a JobSet
// of JobSet's API completes with nothing refused and the secure /metrics
// answers only a scraper bound to metrics-reader; with the child Jobs' create,
// the headless Service's create, the JobSets' status update or the Lease's get
// taken out, the command
// is refused it.
func TestDeployedRBAC(t *testing.T) {
	base, err := deploytest.Load(filepath.Join("..", "..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := jobsetmod.CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{crds}, AddToScheme: jobset.AddToScheme})
	jobs, err := controllerruntime.Start(t.Context(), e.Config, controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(deployChildren), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop() })
	deploytest.CheckRBAC(t, e.Config, e.Client, deploytest.Controller{
		Name:   "jobset-upstream",
		Base:   base,
		Helper: "TestDeployedCommand",
		Create: createJobSet,
		Needed: []deploytest.Rule{
			{Group: "batch", Resource: "jobs", Verb: "create"},
			{Group: "", Resource: "services", Verb: "create"},
			{Group: upstream.API, Resource: "jobsets/status", Verb: "update"},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		},
		Args: func(_, managedBy string) []string {
			return []string{"--managed-by=" + managedBy, "--child-managed-by=" + deployChildren}
		},
	})
}

// createJobSet creates a leader and two workers of JobSet's API in ns, handed
// to managedBy; it is done when the JobSet has Completed.
func createJobSet(ctx context.Context, k8s client.Client, ns, managedBy string) (func(context.Context) (bool, string, error), error) {
	js := leaderWorkers(ns, "deployed", &managedBy)
	if err := k8s.Create(ctx, js); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, string, error) {
		got := &jobset.JobSet{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(js), got); err != nil {
			return false, "", err
		}
		return got.Status.TerminalState == string(jobset.JobSetCompleted), fmt.Sprintf("status %+v", got.Status), nil
	}, nil
}

// TestDeployedCommand is the command process of TestDeployedRBAC.
func TestDeployedCommand(t *testing.T) { deploytest.RunCommand(t, run) }
