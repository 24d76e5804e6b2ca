// Command trainingjob-controller is the TrainingJob controller of
// examples/trainingjob (the command of the same name in module
// github.com/jobkit/jobkit/examples) with the Kueue integration: with --kueue,
// the TrainingJobs that carry a queue name (label kueue.x-k8s.io/queue-name)
// wait suspended until Kueue admits them, run with the flavour's node
// selectors and tolerations, are suspended again when preempted, and give
// their quota back as they finish. It lives in this module because Kueue
// v0.17 builds only with Kubernetes libraries below v0.37 (docs/kueue.md).
//
//	kubectl apply -f examples/trainingjob/config/crd/ -f examples/kueue/config/kueue/rbac.yaml
//	go run ./cmd/trainingjob-controller --kubeconfig ~/.kube/config --kueue --kueue-config config/kueue/kueue-config.yaml
//	kubectl create -f config/samples/trainingjob.yaml
//
// Flags: those of examples/trainingjob's command (--kubeconfig, --managed-by,
// --leader-elect, --workers, the metrics, probe, backoff, QPS and logging
// flags; --help lists them), and --kueue and --kueue-config (the Kueue
// Configuration file the cluster's Kueue runs with). Without --kueue it runs
// as the examples' command does.
package main

import (
	"context"
	"flag"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/crcmd"
	"github.com/jobkit/jobkit/examples/kueue/internal/kueueflags"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/reconcile"
)

func main() { cmdflags.Main("trainingjob-controller", run) }

// parse parses args (without the program name) and reads --kueue-config.
func parse(args []string) (cmdflags.Flags, *kueueflags.Flags, error) {
	fs := flag.NewFlagSet("trainingjob-controller", flag.ContinueOnError)
	kf := kueueflags.Register(fs)
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "TrainingJobs", ManagedBy: controller.DefaultManagedBy, Workers: 5, MetricsAddr: "0",
	}).Parse(args)
	if err != nil {
		return f, nil, err
	}
	_, err = kf.Config()
	return f, kf, err
}

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	f, kf, err := parse(args)
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
	queued, err := kueueflags.Setup(ctx, kf, mgr, controller.Type, f.ManagedBy)
	if err != nil {
		return err
	}
	logger.Info("Starting the TrainingJob controller", "managedBy", f.ManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect, "kueue", queued)
	return mgr.Start(ctx)
}
