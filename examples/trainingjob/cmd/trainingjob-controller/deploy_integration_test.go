package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/deploytest"
	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// TestDeployedRBAC runs the command with the args of its Deployment
// (config/default) as the service account of that base, holding only the RBAC the
// base renders (generated from the controller's +kubebuilder:rbac markers): the
// sample TrainingJob completes with nothing refused; with the workers' create, the
// TrainingJobs' status update or the Lease's get taken out, the command is
// refused it.
func TestDeployedRBAC(t *testing.T) {
	base, err := deploytest.Load(filepath.Join("..", "..", "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	e := envtesting.StartT(t, envtesting.Options{CRDs: []string{filepath.Join("..", "..", "config", "crd")}, AddToScheme: v1alpha1.AddToScheme})
	deploytest.CheckRBAC(t, e.Config, e.Client, deploytest.Controller{
		Name:   "trainingjob-controller",
		Base:   base,
		Helper: "TestDeployedCommand",
		Create: createSample,
		Needed: []deploytest.Rule{
			{Group: "", Resource: "pods", Verb: "create"},
			{Group: v1alpha1.GroupName, Resource: "trainingjobs/status", Verb: "update"},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "get"},
		},
	})
}

// createSample creates config/samples/trainingjob.yaml in ns, handed to
// managedBy; it is done when the run has finished Complete.
func createSample(ctx context.Context, k8s client.Client, ns, managedBy string) (func(context.Context) (bool, string, error), error) {
	tj := &v1alpha1.TrainingJob{}
	if err := envtesting.ReadYAML(filepath.Join("..", "..", "config", "samples", "trainingjob.yaml"), tj); err != nil {
		return nil, err
	}
	tj.Namespace, tj.Spec.ManagedBy = ns, &managedBy
	if err := k8s.Create(ctx, tj); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (bool, string, error) {
		got := &v1alpha1.TrainingJob{}
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tj), got); err != nil {
			return false, "", err
		}
		s := got.Status
		done := controller.Finished(got) && s.Conditions[len(s.Conditions)-1].Type == "Complete"
		return done, fmt.Sprintf("status %+v", s), nil
	}, nil
}

// TestDeployedCommand is the command process of TestDeployedRBAC.
func TestDeployedCommand(t *testing.T) { deploytest.RunCommand(t, run) }
