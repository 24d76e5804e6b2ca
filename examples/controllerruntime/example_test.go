package controllerruntime_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

// Running the controller on a manager; this needs a cluster, so it has no output.
func ExampleSetup() {
	var restConfig *rest.Config // from a kubeconfig or the in-cluster config
	if restConfig == nil {
		return
	}
	mgr, err := controllerruntime.NewManager(restConfig, controllerruntime.ManagerOptions{
		LeaderElection:          true,
		LeaderElectionNamespace: "jobkit-system",
		ManagedByName:           "example.com/job-controller",
	})
	if err != nil {
		panic(err)
	}
	if _, err := controllerruntime.Setup(mgr, reconcile.Config{Name: "example.com/job-controller"}, controllerruntime.Options{Workers: 10}); err != nil {
		panic(err)
	}
	_ = mgr.Start(context.Background())
}

// Which Jobs a controller takes: only its own name in spec.managedBy, and a Job
// without managedBy only for the name of the built-in Job controller.
func ExampleIsManagedBy() {
	job := &batchv1.Job{}
	fmt.Println(controllerruntime.IsManagedBy(job, controllerruntime.DefaultManagedBy))
	fmt.Println(controllerruntime.IsManagedBy(job, batchv1.JobControllerName))
	job.Spec.ManagedBy = ptr.To(controllerruntime.DefaultManagedBy)
	fmt.Println(controllerruntime.IsManagedBy(job, controllerruntime.DefaultManagedBy))
	// Output:
	// false
	// true
	// true
}

// The Lease a leader-elected controller holds.
func ExampleLeaseName() {
	fmt.Println(controllerruntime.LeaseName(controllerruntime.DefaultManagedBy))
	// Output:
	// jobkit.dev-job-controller
}
