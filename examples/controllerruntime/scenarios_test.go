package controllerruntime_test

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
)

// start is the controller-runtime adapter's scenarios.StartFunc: a new manager (no
// metrics server, no leader election) with a new controller, stopped by cancelling
// it and waiting for the manager to return.
func start(ctx context.Context, cfg *rest.Config, managedBy string) (func(), error) {
	r, err := controllerruntime.Start(ctx, cfg,
		controllerruntime.ManagerOptions{SkipNameValidation: true},
		scenarios.ReconcileConfig(managedBy),
		controllerruntime.Options{Workers: 2, SkipNameValidation: true})
	if err != nil {
		return nil, err
	}
	return func() { _ = r.Stop() }, nil
}

func TestScenarios(t *testing.T) {
	scenarios.Run(t, restConfig, start)
}
