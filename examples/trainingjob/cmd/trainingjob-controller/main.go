// Command trainingjob-controller runs the TrainingJob controller of
// examples/trainingjob against the cluster of a kubeconfig (or in a cluster). It
// manages the TrainingJobs whose spec.managedBy is --managed-by (default
// ml.examples.jobkit.dev/trainingjob-controller) and those without managedBy.
//
//	kubectl apply -f examples/trainingjob/config/crd/
//	go run ./trainingjob/cmd/trainingjob-controller --kubeconfig ~/.kube/config
//	kubectl create -f examples/trainingjob/config/samples/trainingjob.yaml
//
// Flags: --kubeconfig, --managed-by, --leader-elect, --leader-elect-namespace,
// --workers, --metrics-bind-address (controller-runtime's metrics, the
// trainingjob_controller_* ones among them; default "0", off), --metrics-secure
// (HTTPS with authentication and authorization) and --metrics-cert-path (its
// certificate's directory; default a self-signed one), --health-probe-bind-address
// (/healthz and /readyz, default :8081), --api-backoff-base and --api-backoff-max
// (the requeue after an API error, 1s doubling to 1m), --kube-api-qps and
// --kube-api-burst, --logging-format (text or json) and klog's logging flags (-v);
// --help lists them.
//
// SIGINT and SIGTERM stop it cleanly and it exits 0, whenever they arrive (waiting for
// the API server, the caches or the lease). Started before its API server answers, it
// waits for it (retrying /version, 1 s doubling to 30 s) instead of exiting.
package main

import (
	"context"
	"flag"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/crcmd"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/reconcile"
)

func main() { cmdflags.Main("trainingjob-controller", run) }

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("trainingjob-controller", flag.ContinueOnError)
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "TrainingJobs", ManagedBy: controller.DefaultManagedBy, Workers: 5, MetricsAddr: "0",
	}).Parse(args)
	if err != nil {
		return err
	}
	mgr, logger, err := crcmd.NewManager(ctx, f, "trainingjob-controller", v1alpha1.AddToScheme)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, jkcr.Options[*v1alpha1.TrainingJob]{Config: reconcile.Config{Name: f.ManagedBy}, Workers: f.Workers, APIBackoff: f.APIBackoff}); err != nil {
		return err
	}
	logger.Info("Starting the TrainingJob controller", "managedBy", f.ManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect)
	return mgr.Start(ctx)
}
