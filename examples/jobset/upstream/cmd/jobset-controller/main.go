// Command jobset-controller is the example's JobSet controller
// (examples/jobset/cmd/jobset-controller) with a choice of API: --api
// jobset.examples.jobkit.dev (the default) syncs the example's own JobSets,
// beside a real JobSet installation; --api jobset.x-k8s.io syncs JobSet's own
// (jobset.x-k8s.io/v1alpha2, JobSet's Go types and CRD from the module
// sigs.k8s.io/jobset), so that it replaces JobSet's controller, or runs beside
// it on the JobSets whose spec.managedBy names it (--managed-by).
//
//	kubectl apply --server-side -f $(hack/jobset-crd.sh)
//	cd examples/jobset/upstream
//	go run ./cmd/jobset-controller --api jobset.x-k8s.io --kubeconfig ~/.kube/config
//
// The other flags are the example command's: --kubeconfig, --managed-by,
// --child-managed-by, --feature-gates (InPlaceRestart=true, JobSet's alpha
// gate of the in-place restart), --leader-elect, --leader-elect-namespace, --workers,
// --metrics-bind-address, --metrics-secure, --metrics-cert-path,
// --health-probe-bind-address, --kube-api-qps, --kube-api-burst,
// --logging-format and -v; --help lists them and exits 0. SIGINT and SIGTERM
// stop it cleanly.
//
// Its deploy files are ../../config (dist/jobset-upstream): config/default
// in place of JobSet's controller, config/side-by-side beside it
// (--managed-by=jobkit.dev/jobset-controller); the image is examples/Dockerfile's
// with CMD=jobset/upstream/cmd/jobset-controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func main() { cmdflags.Main("jobset-controller", run) }

// api is one value of --api: the scheme it needs and its Setup.
type api struct {
	addToScheme func(*runtime.Scheme) error
	setup       func(manager.Manager, controller.Options) error
}

// apis are the values of --api.
var apis = map[string]api{
	v1alpha2.GroupName: {v1alpha2.AddToScheme, func(m manager.Manager, o controller.Options) error {
		_, err := controller.Setup(m, o)
		return err
	}},
	upstream.API: {jobset.AddToScheme, func(m manager.Manager, o controller.Options) error {
		_, err := upstream.Setup(m, o)
		return err
	}},
}

// command is what the flags of one run say.
type command struct {
	// apiName is --api, a the API it names.
	apiName string
	a       api
	// flags are the flags every example command has (--managed-by included).
	flags          cmdflags.Flags
	childManagedBy string
	gates          *cmdflags.FeatureGates
}

// parse reads args (without the program name) into a command, checking --api
// and --child-managed-by.
func parse(args []string) (command, error) {
	fs := flag.NewFlagSet("jobset-controller", flag.ContinueOnError)
	apiName := fs.String("api", v1alpha2.GroupName, "the API group of the JobSets to sync: "+v1alpha2.GroupName+" (the example's own) or "+upstream.API+" (JobSet's)")
	childManagedBy := fs.String("child-managed-by", "", "the spec.managedBy of the child Jobs created; empty leaves them to the kube-controller-manager")
	gates := cmdflags.NewFeatureGates(map[string]bool{gateInPlaceRestart: false})
	fs.Var(gates, "feature-gates", "comma-separated Name=true|false of JobSet's alpha features, as JobSet's controller takes them: "+
		gateInPlaceRestart+" (default false) watches the JobSets' pods and moves the in-place restart barrier of those under restartStrategy InPlaceRestart; off, a JobSet under InPlaceRestart is failed (reason InvalidJobSet) as JobSet's webhook refuses it with the gate off")
	f, err := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "JobSets", ManagedBy: plaingroup.ControllerName, Workers: 5, MetricsAddr: "0",
	}).Parse(args)
	if err != nil {
		return command{}, err
	}
	a, ok := apis[*apiName]
	if !ok {
		return command{}, fmt.Errorf("--api=%q: must be %s or %s", *apiName, v1alpha2.GroupName, upstream.API)
	}
	if err := cmdflags.CheckManagedBy("child-managed-by", *childManagedBy); err != nil {
		return command{}, err
	}
	return command{apiName: *apiName, a: a, flags: f, childManagedBy: *childManagedBy, gates: gates}, nil
}

// run runs the command with args (without the program name) until ctx ends.
func run(ctx context.Context, args []string) error {
	c, err := parse(args)
	if err != nil {
		return err
	}
	f, a, gates := c.flags, c.a, c.gates
	logger, err := f.Logger()
	if err != nil {
		return err
	}
	crlog.SetLogger(logger)
	cfg, err := f.Connect(ctx, "jobset-controller", logger)
	if err != nil {
		return err
	}
	s := runtime.NewScheme()
	if err := errors.Join(scheme.AddToScheme(s), a.addToScheme(s)); err != nil {
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
		Scheme:                  s,
	})
	if err != nil {
		return err
	}
	if err := a.setup(mgr, options(f, c.childManagedBy, gates)); err != nil {
		return err
	}
	logger.Info("Starting the JobSet controller", "api", c.apiName, "managedBy", f.ManagedBy, "childManagedBy", c.childManagedBy, "workers", f.Workers, "leaderElect", f.LeaderElect, "featureGates", gates.String())
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
