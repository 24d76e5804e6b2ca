package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/deploytest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

// deployChildren is the spec.managedBy of the child Jobs in TestDeployedRBAC:
// jobkit's Job controller runs them, in the test's process.
const deployChildren = "tests.jobkit.dev/deployed-children"

// TestDeployedRBAC runs the command with the args of its Deployment
// (config/default) as the service account of that base, holding only the RBAC the
// base renders (generated from the controller's +kubebuilder:rbac markers): the
// sample JobSet completes with nothing refused and the secure /metrics answers
// only a scraper bound to metrics-reader; with the child Jobs' create, the
// JobSets' status update or the Lease's get taken out, the command is refused
// it.
func TestDeployedRBAC(t *testing.T) {
	base, err := deploytest.Load(filepath.Join("..", "..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "config", "crd")}, AddToScheme: v1alpha2.AddToScheme})
	jobs, err := controllerruntime.Start(t.Context(), e.Config, controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(deployChildren), controllerruntime.Options{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = jobs.Stop() })
	deploytest.CheckRBAC(t, e.Config, e.Client, deploytest.Controller{
		Name:   "jobset-controller",
		Base:   base,
		Helper: "TestDeployedCommand",
		Create: createSample,
		Needed: []deploytest.Rule{
			{Group: "batch", Resource: "jobs", Verb: "create"},
			{Group: v1alpha2.GroupName, Resource: "jobsets/status", Verb: "update"},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		},
		Args: func(_, managedBy string) []string {
			return []string{"--managed-by=" + managedBy, "--child-managed-by=" + deployChildren}
		},
	})
}

// createSample creates config/samples/jobset.yaml in ns, handed to managedBy;
// it is done when the JobSet has Completed.
func createSample(ctx context.Context, k8s client.Client, ns, managedBy string) (func(context.Context) (bool, string, error), error) {
	js := &v1alpha2.JobSet{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "jobset.yaml"), js); err != nil {
		return nil, err
	}
	js.Namespace, js.Spec.ManagedBy = ns, &managedBy
	if err := k8s.Create(ctx, js); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, string, error) {
		got := &v1alpha2.JobSet{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(js), got); err != nil {
			return false, "", err
		}
		return got.Status.TerminalState == v1alpha2.Completed, fmt.Sprintf("status %+v", got.Status), nil
	}, nil
}

// TestDeployedCommand is the command process of TestDeployedRBAC.
func TestDeployedCommand(t *testing.T) { deploytest.RunCommand(t, run) }
