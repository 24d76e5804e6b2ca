// Command jobkit-controller-runtime runs the jobkit Job controller built on
// controller-runtime against the cluster of a kubeconfig (or in a cluster). It
// manages the batch/v1 Jobs whose spec.managedBy is --managed-by.
//
//	go run ./controllerruntime/cmd/jobkit-controller-runtime --kubeconfig ~/.kube/config
//
// Flags: --kubeconfig, --managed-by, --leader-elect, --leader-elect-namespace,
// --workers, --metrics-bind-address, --metrics-secure (HTTPS with authentication
// and authorization) and --metrics-cert-path (its certificate's directory; default
// a self-signed one), --health-probe-bind-address, --api-backoff-base and
// --api-backoff-max (the requeue after an API error, 1s doubling to 1m), --kube-api-qps and
// --kube-api-burst (client-side rate limits, default 20 and 30 as
// kube-controller-manager's), --logging-format (text or json) and klog's logging flags (-v); --help lists them.
//
// It serves the Kubernetes Job controller's job_controller_* metrics (with
// controller-runtime's own) on /metrics at --metrics-bind-address (default :8080),
// and /healthz and /readyz (200 once the caches have synced) at
// --health-probe-bind-address (default :8081); "0" turns either off.
//
// SIGINT and SIGTERM stop it cleanly and it exits 0, whenever they arrive (waiting for
// the API server, the caches or the lease). Started before its API server answers, it
// waits for it (retrying /version, 1 s doubling to 30 s) instead of exiting.
package main

import (
	"context"
	"flag"

	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/reconcile"
)

func main() { cmdflags.Main("jobkit-controller-runtime", run) }

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	// A FlagSet of our own: controller-runtime registers its own --kubeconfig on
	// flag.CommandLine.
	fs := flag.NewFlagSet("jobkit-controller-runtime", flag.ContinueOnError)
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "Jobs", ManagedBy: controllerruntime.DefaultManagedBy, Workers: controllerruntime.DefaultWorkers, MetricsAddr: ":8080",
	}).Parse(args)
	if err != nil {
		return err
	}
	logger, err := f.Logger()
	if err != nil {
		return err
	}
	crlog.SetLogger(logger)
	cfg, err := f.Connect(ctx, "jobkit-controller-runtime", logger)
	if err != nil {
		return err
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
	})
	if err != nil {
		return err
	}
	if _, err := controllerruntime.Setup(mgr, reconcile.Config{Name: f.ManagedBy}, controllerruntime.Options{Workers: f.Workers, APIBackoff: f.APIBackoff}); err != nil {
		return err
	}
	logger.Info("Starting the jobkit Job controller (controller-runtime)", "managedBy", f.ManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect)
	return mgr.Start(ctx)
}
