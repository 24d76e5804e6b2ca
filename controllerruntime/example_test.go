package controllerruntime_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/controllerruntime/securemetrics"
	"github.com/jobkit/jobkit/reconcile"
)

// A batch/v1 Job controller on a manager with leader election: the one call with
// JobType. It needs a cluster, so it has no output.
func ExampleSetup() {
	var restConfig *rest.Config // from a kubeconfig or the in-cluster configuration
	if restConfig == nil {
		return
	}
	mgr, err := manager.New(restConfig, manager.Options{
		LeaderElection:   true,
		LeaderElectionID: "example.com-job-controller",
		Metrics:          securemetrics.Options(":8443"), // or metricsserver.Options{BindAddress: ":8080"}
	})
	if err != nil {
		panic(err)
	}
	if _, err := jkcr.Setup(mgr, jkcr.Options[*batchv1.Job]{
		Type:   reconcile.JobType,
		Config: reconcile.Config{Name: "example.com/job-controller"},
	}); err != nil {
		panic(err)
	}
	_ = mgr.Start(context.Background())
}

// The field index the controller lists an owner's pods with; a test over
// controller-runtime's fake client registers it the same way.
func ExampleOwnerUID() {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "1234"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}}
	fmt.Println(jkcr.OwnerUIDIndex, jkcr.OwnerUID(pod), jkcr.OwnerUID(&corev1.Pod{}))
	// fake.NewClientBuilder().WithIndex(&corev1.Pod{}, jkcr.OwnerUIDIndex, jkcr.OwnerUID)
	// Output:
	// jobkit.dev/controller-uid [1234] [<none>]
}
