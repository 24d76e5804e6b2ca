package main

import (
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/internal/deploytest"
)

// TestDeployedRBAC runs the command with the args of its Deployment
// (config/default) as the service account of that base, holding only the RBAC the
// base renders (generated from the controller's +kubebuilder:rbac markers): a Job
// completes with nothing refused; with the pods' create, the Jobs' status update
// or the Lease's get taken out, the command is refused it.
func TestDeployedRBAC(t *testing.T) {
	base, err := deploytest.Load(filepath.Join("..", "..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deploytest.CheckRBAC(t, cfg, k8s, deploytest.Controller{
		Name:   "jobkit-controller-runtime",
		Base:   base,
		Helper: "TestDeployedCommand",
		Create: deploytest.Job,
		Needed: []deploytest.Rule{
			{Group: "", Resource: "pods", Verb: "create"},
			{Group: "batch", Resource: "jobs/status", Verb: "update"},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		},
	})
}

// TestDeployedCommand is the command process of TestDeployedRBAC.
func TestDeployedCommand(t *testing.T) { deploytest.RunCommand(t, run) }
