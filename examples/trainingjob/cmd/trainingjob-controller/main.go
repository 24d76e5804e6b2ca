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
// --workers, --metrics-bind-address (controller-runtime's metrics; default "0",
// off), --health-probe-bind-address (/healthz and /readyz, default :8081),
// --kube-api-qps and --kube-api-burst, and klog's logging flags (-v); --help
// lists them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	crconfig "sigs.k8s.io/controller-runtime/pkg/client/config"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager/signals"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/clientflags"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/reconcile"
)

func main() {
	err := run(signals.SetupSignalHandler(), os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "trainingjob-controller:", err)
		os.Exit(1)
	}
}

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("trainingjob-controller", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; empty means $KUBECONFIG, the in-cluster config or ~/.kube/config")
	managedBy := fs.String("managed-by", controller.DefaultManagedBy, "the spec.managedBy value of the TrainingJobs this controller manages")
	leaderElect := fs.Bool("leader-elect", false, "hold a Lease so that only one replica syncs TrainingJobs at a time")
	leaderNS := fs.String("leader-elect-namespace", "", "namespace of the Lease; empty means the pod's namespace (required outside a cluster)")
	workers := fs.Int("workers", 5, "number of TrainingJobs synced at once")
	metricsAddr := fs.String("metrics-bind-address", "0", `address of controller-runtime's /metrics endpoint; "0" disables it`)
	probeAddr := fs.String("health-probe-bind-address", ":8081", `address of the /healthz and /readyz probes; "0" disables them`)
	limits := clientflags.Register(fs)
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *workers < 1 {
		return fmt.Errorf("--workers=%d: must be at least 1", *workers)
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
	s := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(s), v1alpha1.AddToScheme(s)); err != nil {
		return err
	}
	mgr, err := controllerruntime.NewManager(cfg, controllerruntime.ManagerOptions{
		LeaderElection:          *leaderElect,
		LeaderElectionNamespace: *leaderNS,
		ManagedByName:           *managedBy,
		MetricsBindAddress:      *metricsAddr,
		HealthProbeBindAddress:  *probeAddr,
		Logger:                  logger,
		Scheme:                  s,
	})
	if err != nil {
		return err
	}
	if _, err := controller.Setup(mgr, reconcile.Config{Name: *managedBy}, controller.Options{Workers: *workers}); err != nil {
		return err
	}
	logger.Info("Starting the TrainingJob controller", "managedBy", *managedBy, "workers", *workers, "leaderElect", *leaderElect)
	return mgr.Start(ctx)
}
