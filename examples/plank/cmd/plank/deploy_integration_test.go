package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
)

// TestDeployedRBAC runs the command with the args of its Deployment
// (config/default) as the service account of that base, holding only the RBAC the
// base renders (generated from the controller's +kubebuilder:rbac markers): the
// sample RunJob succeeds with nothing refused and the secure /metrics answers
// only a scraper bound to metrics-reader; with the pods' create, the RunJobs'
// status update or the Lease's get taken out, the command is refused it. plank
// has no --managed-by: each run of the command is held to the namespace of its
// RunJob (--namespace), with the sample's queue (--queue).
func TestDeployedRBAC(t *testing.T) {
	base, err := deploytest.Load(filepath.Join("..", "..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "config", "crd")}, AddToScheme: v1alpha1.AddToScheme})
	deploytest.CheckRBAC(t, e.Config, e.Client, deploytest.Controller{
		Name:   "plank",
		Base:   base,
		Helper: "TestDeployedCommand",
		Create: createSample,
		Needed: []deploytest.Rule{
			{Group: "", Resource: "pods", Verb: "create"},
			{Group: v1alpha1.GroupName, Resource: "runjobs/status", Verb: "update"},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		},
		Args: func(ns, _ string) []string { return []string{"--namespace=" + ns, "--queue=default=2"} },
	})
}

// createSample creates config/samples/runjob.yaml in ns; it is done when the
// run has succeeded.
func createSample(ctx context.Context, k8s client.Client, ns, _ string) (func(context.Context) (bool, string, error), error) {
	rj := &v1alpha1.RunJob{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "runjob.yaml"), rj); err != nil {
		return nil, err
	}
	rj.Namespace, rj.GenerateName, rj.Name = ns, "", "deployed"
	if err := k8s.Create(ctx, rj); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, string, error) {
		got := &v1alpha1.RunJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(rj), got); err != nil {
			return false, "", err
		}
		return got.Status.State == v1alpha1.StateSuccess, fmt.Sprintf("status %+v", got.Status), nil
	}, nil
}

// TestDeployedCommand is the command process of TestDeployedRBAC.
func TestDeployedCommand(t *testing.T) {
	deploytest.RunCommand(t, func(ctx context.Context, args []string) error { return run(ctx, args, os.Stderr) })
}
