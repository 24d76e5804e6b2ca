package controller_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/groups/childjobs"
)

// The sample JobSet converted onto childjobs.Input and planned at its first sync:
// the leader is created (the workers wait for it to be ready), with the
// headless Service of the pods' names.
func ExampleInput() {
	data, err := os.ReadFile("../config/samples/jobset.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	js := &v1alpha2.JobSet{}
	if err := yaml.UnmarshalStrict(data, js); err != nil {
		fmt.Println(err)
		return
	}
	js.Namespace, js.UID = "ml", "uid-1"
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	in := controller.Input(js, nil, false, "", "jobkit.dev/job-controller", now)
	p, err := childjobs.Compute(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.String())
	leader := p.Create[0].Job
	fmt.Println(leader.Name, *leader.Spec.ManagedBy, leader.OwnerReferences[0].Kind)
	// Output:
	// status: restarts=0 countTowardsMax=0 terminal="" (changed)
	// create service train: network.enableDNSHostnames: the pods' subdomain train needs a headless Service
	// create 1: train-leader-0 (index 0 of "leader" has no child (restart attempt 0, job restart attempt 0))
	// train-leader-0 jobkit.dev/job-controller JobSet
}

// Validate names the field and the value of what JobSet's webhook would refuse.
func ExampleValidate() {
	js := &v1alpha2.JobSet{Spec: v1alpha2.JobSetSpec{
		ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "workers", Replicas: 2}},
		SuccessPolicy:  &v1alpha2.SuccessPolicy{Operator: v1alpha2.OperatorAny, TargetReplicatedJobs: []string{"leader"}},
	}}
	js.Name = "train"
	fmt.Println(controller.Validate(js))
	// Output:
	// [spec.successPolicy.targetReplicatedJobs[0]: Invalid value: "leader": invalid replicatedJob name 'leader' does not appear in .spec.ReplicatedJobs]
}

// Setup registers the controller with a manager whose scheme holds the JobSet
// types; the children carry spec.managedBy jobkit.dev/job-controller, so that
// jobkit's Job controller (examples/controllerruntime) runs them. It needs a
// cluster, so this example only compiles.
func ExampleSetup() {
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha2.AddToScheme(scheme)); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := controller.Setup(mgr, controller.Options{ChildManagedBy: "jobkit.dev/job-controller"}); err != nil {
		fmt.Println(err)
		return
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}
