package controller_test

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/plank/controller"
)

// Example wires the controller into a manager. It needs a cluster with the
// RunJob CRD installed, so it is compiled but not run.
func Example() {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme: scheme,
		Cache:  controller.CacheOptions(""), // only pods labelled controller.LabelRunUID
	})
	if err != nil {
		panic(err)
	}
	r, err := controller.New(mgr.GetClient(), controller.Config{
		MaxPending: 20,
		Queues:     map[string]int{"gpu": 2},
	})
	if err != nil {
		panic(err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		panic(err)
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}
