// Command jobkit-controller-runtime runs the jobkit Job controller built on
// controller-runtime against the cluster of a kubeconfig (or in a cluster). It
// manages the batch/v1 Jobs whose spec.managedBy is --managed-by.
//
//	go run ./controllerruntime/cmd/jobkit-controller-runtime --kubeconfig ~/.kube/config
//
// Flags: --kubeconfig, --managed-by, --leader-elect, --leader-elect-namespace,
// --workers, --metrics-bind-address, --health-probe-bind-address, --kube-api-qps and
// --kube-api-burst (client-side rate limits, default 20 and 30 as
// kube-controller-manager's), and klog's logging flags (-v); --help lists them.
//
// It serves the Kubernetes Job controller's job_controller_* metrics (with
// controller-runtime's own) on /metrics at --metrics-bind-address (default :8080),
// and /healthz and /readyz (200 once the caches have synced) at
// --health-probe-bind-address (default :8081); "0" turns either off.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	crconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/clientflags"
	"github.com/jobkit/jobkit/reconcile"
)

func main() {
	err := run(signals.SetupSignalHandler(), os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobkit-controller-runtime:", err)
		os.Exit(1)
	}
}

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	// A FlagSet of our own: controller-runtime registers its own --kubeconfig on
	// flag.CommandLine.
	fs := flag.NewFlagSet("jobkit-controller-runtime", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; empty means $KUBECONFIG, the in-cluster config or ~/.kube/config")
	managedBy := fs.String("managed-by", controllerruntime.DefaultManagedBy, "the spec.managedBy value of the Jobs this controller manages")
	leaderElect := fs.Bool("leader-elect", false, "hold a Lease so that only one replica syncs Jobs at a time")
	leaderNS := fs.String("leader-elect-namespace", "", "namespace of the Lease; empty means the pod's namespace (required outside a cluster)")
	workers := fs.Int("workers", controllerruntime.DefaultWorkers, "number of Jobs synced at once")
	metricsAddr := fs.String("metrics-bind-address", ":8080", `address of the Prometheus /metrics endpoint (job_controller_* metrics); "0" disables it`)
	probeAddr := fs.String("health-probe-bind-address", ":8081", `address of the /healthz and /readyz probes; "0" disables them`)
	limits := clientflags.Register(fs)
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := limits.Validate(); err != nil {
		return err
	}
	logger := klog.NewKlogr()
	crlog.SetLogger(logger)

	var cfg *rest.Config
	var err error
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	} else {
		cfg, err = crconfig.GetConfig()
	}
	if err != nil {
		return fmt.Errorf("loading the cluster configuration: %w", err)
	}
	limits.Apply(cfg)
	mgr, err := controllerruntime.NewManager(cfg, controllerruntime.ManagerOptions{
		LeaderElection:          *leaderElect,
		LeaderElectionNamespace: *leaderNS,
		ManagedByName:           *managedBy,
		MetricsBindAddress:      *metricsAddr,
		HealthProbeBindAddress:  *probeAddr,
		Logger:                  logger,
	})
	if err != nil {
		return err
	}
	if _, err := controllerruntime.Setup(mgr, reconcile.Config{Name: *managedBy}, controllerruntime.Options{Workers: *workers}); err != nil {
		return err
	}
	logger.Info("Starting the jobkit Job controller (controller-runtime)", "managedBy", *managedBy, "workers", *workers, "leaderElect", *leaderElect)
	return mgr.Start(ctx)
}
