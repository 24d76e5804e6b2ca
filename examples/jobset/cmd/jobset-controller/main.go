// Command jobset-controller runs the JobSet controller of examples/jobset
// against the cluster of a kubeconfig (or in a cluster). It syncs the JobSets
// whose spec.managedBy is --managed-by (default JobSet's reserved name,
// jobset.sigs.k8s.io/jobset-controller, which also takes those without
// managedBy), and sets --child-managed-by as spec.managedBy of the child Jobs
// it creates (empty, the default, leaves them to the kube-controller-manager;
// jobkit.dev/job-controller hands them to jobkit-controller-runtime).
//
//	kubectl apply -f examples/jobset/config/crd/
//	go run ./jobset/cmd/jobset-controller --kubeconfig ~/.kube/config
//	kubectl create -f examples/jobset/config/samples/jobset.yaml
//
// Flags: --kubeconfig, --managed-by, --child-managed-by, --leader-elect,
// --leader-elect-namespace, --workers, --feature-gates (JobSet's alpha
// features: InPlaceRestart=true moves the in-place restart barrier, as
// JobSet's controller does under that gate; off, the default, a JobSet under
// restartStrategy InPlaceRestart is failed as invalid, as JobSet's webhook
// refuses it with the gate off), --metrics-bind-address
// (controller-runtime's metrics; default "0", off), --metrics-secure (HTTPS with
// authentication and authorization) and --metrics-cert-path (its certificate's
// directory; default a self-signed one), --health-probe-bind-address
// (/healthz and /readyz, default :8081), --kube-api-qps and --kube-api-burst,
// --logging-format (text or json) and klog's logging flags (-v); --help lists
// them and exits 0.
//
// SIGINT and SIGTERM stop it cleanly and it exits 0, whenever they arrive.
// Started before its API server answers, it waits for it.
package main

import (
	"context"
	"flag"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/crcmd"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func main() { cmdflags.Main("jobset-controller", run) }

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("jobset-controller", flag.ContinueOnError)
	childManagedBy := fs.String("child-managed-by", "", "the spec.managedBy of the child Jobs created; empty leaves them to the kube-controller-manager")
	gates := cmdflags.NewFeatureGates(map[string]bool{gateInPlaceRestart: false})
	fs.Var(gates, "feature-gates", "comma-separated Name=true|false of JobSet's alpha features, as JobSet's controller takes them: "+
		gateInPlaceRestart+" (default false) watches the JobSets' pods and moves the in-place restart barrier of those under restartStrategy InPlaceRestart; off, a JobSet under InPlaceRestart is failed (reason InvalidJobSet) as JobSet's webhook refuses it with the gate off")
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "JobSets", ManagedBy: plaingroup.ControllerName, Workers: 5, MetricsAddr: "0",
	}).Parse(args)
	if err != nil {
		return err
	}
	if err := cmdflags.CheckManagedBy("child-managed-by", *childManagedBy); err != nil {
		return err
	}
	mgr, logger, err := crcmd.NewManager(ctx, f, "jobset-controller", v1alpha2.AddToScheme)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, options(f, *childManagedBy, gates)); err != nil {
		return err
	}
	logger.Info("Starting the JobSet controller", "managedBy", f.ManagedBy, "childManagedBy", *childManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect, "featureGates", gates.String())
	return mgr.Start(ctx)
}

// gateInPlaceRestart is JobSet's feature gate of the in-place restart
// (KEP-467, alpha, off by default).
const gateInPlaceRestart = "InPlaceRestart"

// options are the controller's Options the flags say.
func options(f cmdflags.Flags, childManagedBy string, gates *cmdflags.FeatureGates) controller.Options {
	return controller.Options{ManagedBy: f.ManagedBy, ChildManagedBy: childManagedBy, Workers: f.Workers, APIBackoff: f.APIBackoff,
		InPlaceRestart: gates.Enabled(gateInPlaceRestart)}
}
