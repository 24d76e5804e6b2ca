package crcmd

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
)

// NewManager returns the manager the flags f describe, connected as userAgent, with
// client-go's scheme and the kinds addToScheme add, and the logger it logs with
// (also controller-runtime's global one). It waits for the API server as
// cmdflags.Flags.Connect does, until ctx ends.
func NewManager(ctx context.Context, f cmdflags.Flags, userAgent string, addToScheme ...func(*runtime.Scheme) error) (manager.Manager, logr.Logger, error) {
	logger, err := f.Logger()
	if err != nil {
		return nil, logr.Discard(), err
	}
	crlog.SetLogger(logger)
	cfg, err := f.Connect(ctx, userAgent, logger)
	if err != nil {
		return nil, logger, err
	}
	s := runtime.NewScheme()
	errs := []error{scheme.AddToScheme(s)}
	for _, add := range addToScheme {
		errs = append(errs, add(s))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, logger, err
	}
	mgr, err := controllerruntime.NewManager(cfg, controllerruntime.ManagerOptions{
		LeaderElection:          f.LeaderElect,
		LeaderElectionNamespace: f.LeaseNamespace,
		ManagedByName:           f.ManagedBy,
		MetricsBindAddress:      f.MetricsAddr,
		SecureMetrics:           f.MetricsSecure,
		MetricsCertDir:          f.MetricsCertDir,
		HealthProbeBindAddress:  f.ProbeAddr,
		Logger:                  logger,
		Scheme:                  s,
	})
	return mgr, logger, err
}
