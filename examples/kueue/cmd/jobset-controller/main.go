// Command jobset-controller is the JobSet controller of examples/jobset (the
// command of the same name in module github.com/jobkit/jobkit/examples) with
// the Kueue integration: with --kueue, the JobSets that carry a queue name
// (label kueue.x-k8s.io/queue-name) are one Kueue Workload of a pod set per
// replicated job (replicas x pods per child); they wait suspended until
// admitted, their child Jobs run with the flavour's node selectors and
// tolerations (merged into the JobSet's own templates), are suspended again
// when preempted, and give quota back as children succeed and when the
// JobSet finishes. It lives in this module because Kueue v0.17 builds only
// with Kubernetes libraries below v0.37 (docs/kueue.md).
//
// Flags: those of examples/jobset's command (--child-managed-by, --kubeconfig,
// --managed-by, --leader-elect, --workers, the metrics, probe, backoff, QPS
// and logging flags; --help lists them), and --kueue and --kueue-config (the
// Kueue Configuration file the cluster's Kueue runs with). Without --kueue it
// runs as the examples' command does.
package main

import (
	"context"
	"flag"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/crcmd"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/examples/kueue/internal/kueueflags"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func main() { cmdflags.Main("jobset-controller", run) }

// parse parses args (without the program name), checks --child-managed-by and
// reads --kueue-config; it returns the flags and --child-managed-by.
func parse(args []string) (cmdflags.Flags, *kueueflags.Flags, string, error) {
	fs := flag.NewFlagSet("jobset-controller", flag.ContinueOnError)
	childManagedBy := fs.String("child-managed-by", "", "the spec.managedBy of the child Jobs created; empty leaves them to the kube-controller-manager")
	kf := kueueflags.Register(fs)
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "JobSets", ManagedBy: plaingroup.ControllerName, Workers: 5, MetricsAddr: "0",
	}).Parse(args)
	if err != nil {
		return f, nil, "", err
	}
	if err := cmdflags.CheckManagedBy("child-managed-by", *childManagedBy); err != nil {
		return f, nil, "", err
	}
	_, err = kf.Config()
	return f, kf, *childManagedBy, err
}

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	f, kf, childManagedBy, err := parse(args)
	if err != nil {
		return err
	}
	mgr, logger, err := crcmd.NewManager(ctx, f, "jobset-controller", v1alpha2.AddToScheme)
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, controller.Options{ManagedBy: f.ManagedBy, ChildManagedBy: childManagedBy, Workers: f.Workers, APIBackoff: f.APIBackoff}); err != nil {
		return err
	}
	queued, err := kueueflags.Setup(ctx, kf, mgr, controller.JobSetType, f.ManagedBy)
	if err != nil {
		return err
	}
	logger.Info("Starting the JobSet controller", "managedBy", f.ManagedBy, "childManagedBy", childManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect, "kueue", queued)
	return mgr.Start(ctx)
}
