package clientgo_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
)

// TestScenarios runs the integration scenarios shared with the controller-runtime
// adapter against a real API server.
func TestScenarios(t *testing.T) {
	scenarios.Run(t, apiServer(t), startController)
}

// startController is the scenarios.StartFunc of the client-go controller: a new
// clientset, informer factory and Controller (new process state) each time.
func startController(ctx context.Context, cfg *rest.Config, managedBy string) (func(), error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	rc := scenarios.ReconcileConfig(managedBy)
	rc.Logger = funcr.New(func(prefix, args string) { os.Stderr.WriteString(prefix + " " + args + "\n") }, funcr.Options{})
	ctrl, err := clientgo.New(cs, factory, rc, clientgo.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			factory.Shutdown()
			return nil, errors.New("cache of " + typ.String() + " not synced")
		}
	}
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx, 2) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			os.Stderr.WriteString("controller: " + err.Error() + "\n")
		}
		factory.Shutdown()
	}, nil
}
