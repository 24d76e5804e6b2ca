// Command plank runs the RunJob controller of examples/plank against the cluster
// of a kubeconfig (or the one it runs in): single-pod jobs under concurrency
// limits and pod timeouts, as Prow's plank runs ProwJobs.
//
//	plank --kubeconfig ~/.kube/config --max-pending 20 --queue gpu=2 --queue e2e=5
//
// Install the CRD first: kubectl apply -f examples/plank/config/crd/.
//
// --logging-format=json writes one JSON object per line. SIGINT and SIGTERM stop it
// cleanly and it exits 0, whenever they arrive; started before its API server
// answers, it waits for it instead of exiting.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/controllerruntime/securemetrics"
	"github.com/jobkit/jobkit/examples/internal/clientflags"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/plank/controller"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	signalled := ctx.Err() != nil
	stop()
	if code := cmdflags.ExitCode("plank", err, signalled, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// options are the command line flags.
type options struct {
	leaderElect          bool
	leaderElectNamespace string
	namespace            string
	metricsAddr          string
	probeAddr            string
	metricsSecure        bool
	metricsCertDir       string
	rateLimits           *clientflags.RateLimits
	logFormat            *string
	cfg                  controller.Config
	timeouts             plaindl.Timeouts
}

// queueFlag collects --queue name=capacity flags.
type queueFlag map[string]int

func (q queueFlag) String() string {
	parts := make([]string, 0, len(q))
	for name, capacity := range q {
		parts = append(parts, name+"="+strconv.Itoa(capacity))
	}
	return strings.Join(parts, ",")
}

func (q queueFlag) Set(v string) error {
	name, capacity, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want name=capacity", v)
	}
	n, err := strconv.Atoi(capacity)
	if err != nil {
		return fmt.Errorf("%q: capacity %q is not an integer", v, capacity)
	}
	if _, dup := q[name]; dup {
		return fmt.Errorf("%q: queue %s given twice", v, name)
	}
	q[name] = n
	return nil
}

// createErrorsFlag is --create-errors: jobkit or plank.
type createErrorsFlag struct{ policy *runplan.CreateErrorPolicy }

func (f createErrorsFlag) String() string {
	if f.policy == nil || *f.policy == runplan.CreateErrorsJobkit {
		return "jobkit"
	}
	return "plank"
}

func (f createErrorsFlag) Set(v string) error {
	switch v {
	case "jobkit":
		*f.policy = runplan.CreateErrorsJobkit
	case "plank":
		*f.policy = runplan.CreateErrorsPlank
	default:
		return fmt.Errorf("%q: want jobkit or plank", v)
	}
	return nil
}

// stringsFlag collects a repeatable string flag.
type stringsFlag struct{ list *[]string }

func (f stringsFlag) String() string {
	if f.list == nil {
		return ""
	}
	return strings.Join(*f.list, ",")
}

func (f stringsFlag) Set(v string) error {
	if v == "" {
		return fmt.Errorf("must not be empty")
	}
	*f.list = append(*f.list, v)
	return nil
}

// parseFlags parses args (including --kubeconfig and -v); usage and, later,
// the logs go to out.
func parseFlags(args []string, out io.Writer) (*options, *textlogger.Config, error) {
	fs := flag.NewFlagSet("plank", flag.ContinueOnError)
	fs.SetOutput(out)
	o := &options{timeouts: plaindl.DefaultTimeouts()}
	queues := queueFlag{}
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader among the replicas (a Lease named plank.examples.jobkit.dev).")
	fs.StringVar(&o.leaderElectNamespace, "leader-elect-namespace", "", "Namespace of the leader election Lease (default: the pod's namespace).")
	// The name every other example command uses is --leader-elect-namespace; the old
	// spelling stays accepted.
	fs.StringVar(&o.leaderElectNamespace, "leader-election-namespace", "", "Deprecated: use --leader-elect-namespace.")
	fs.StringVar(&o.namespace, "namespace", "", "Only reconcile RunJobs in this namespace (default: all namespaces).")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `Address of the metrics endpoint, e.g. ":8080"; "0" disables it.`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", "0", `Address of the /healthz and /readyz probes, e.g. ":8081"; "0" disables them.`)
	fs.BoolVar(&o.metricsSecure, "metrics-secure", false, "Serve /metrics over HTTPS to clients the API server authenticates and authorizes (get on the non-resource URL /metrics).")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-path", "", "Directory of tls.crt and tls.key, the certificate of the secure /metrics (with --metrics-secure); empty means a self-signed one.")
	fs.DurationVar(&o.cfg.APIBackoff.Base, "api-backoff-base", controller.DefaultAPIBackoffBase, "Requeue delay of a RunJob whose sync failed on an API error, doubled at each failure in a row (the Job controller's 1s).")
	fs.DurationVar(&o.cfg.APIBackoff.Max, "api-backoff-max", controller.DefaultAPIBackoffMax, "Longest requeue delay after API errors (the Job controller's 1m).")
	o.rateLimits = clientflags.Register(fs) // --kube-api-qps, --kube-api-burst
	o.logFormat = cmdflags.RegisterLogFormat(fs)
	fs.IntVar(&o.cfg.MaxPending, "max-pending", 0, "At most this many pending RunJobs per namespace; 0 means no limit.")
	fs.Var(queues, "queue", "A queue and its capacity, name=capacity (repeatable). 0 never runs, negative is unlimited.")
	fs.IntVar(&o.cfg.Workers, "workers", controller.DefaultWorkers, "RunJobs reconciled at once.")
	fs.DurationVar(&o.cfg.RetryAfter, "retry-after", 10*time.Second, "How often a RunJob held back by a limit asks again.")
	fs.Var(createErrorsFlag{&o.cfg.CreateErrors}, "create-errors",
		"How a failed pod create is judged: jobkit (adopt a pod that exists, retry 404 and 429) or plank (every 4xx errors the run).")
	fs.Var(stringsFlag{&o.cfg.ReporterFinalizers}, "reporter-finalizer",
		"A finalizer a reporter puts on the pods, released from a pod that is replaced (repeatable).")
	fs.DurationVar(&o.timeouts.Unscheduled, "pod-unscheduled-timeout", o.timeouts.Unscheduled, "Default time a pod may wait for a node; 0 disables.")
	fs.DurationVar(&o.timeouts.Pending, "pod-pending-timeout", o.timeouts.Pending, "Default time a started pod may stay Pending; 0 disables.")
	fs.DurationVar(&o.timeouts.Running, "pod-running-timeout", o.timeouts.Running, "Default time a pod may run; 0 disables.")
	config.RegisterFlags(fs) // --kubeconfig
	logCfg := textlogger.NewConfig(textlogger.Output(out))
	logCfg.AddFlags(fs) // -v, -vmodule
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if err := o.rateLimits.Validate(); err != nil {
		return nil, nil, err
	}
	if o.metricsCertDir != "" && !o.metricsSecure {
		return nil, nil, fmt.Errorf("--metrics-cert-path=%q: needs --metrics-secure", o.metricsCertDir)
	}
	if len(queues) > 0 {
		o.cfg.Queues = queues
	}
	o.cfg.DefaultTimeouts = &o.timeouts
	return o, logCfg, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, logCfg, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	logger := textlogger.NewLogger(logCfg)
	if *o.logFormat == cmdflags.FormatJSON {
		if logger, err = cmdflags.NewLogger(*o.logFormat, verbosity(logCfg), out); err != nil {
			return err
		}
	}
	ctrl.SetLogger(logger)

	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	o.rateLimits.Apply(restCfg)
	if err := cmdflags.WaitForAPIServer(ctx, restCfg, logger); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	metrics := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		metrics = securemetrics.Options(o.metricsAddr)
		metrics.CertDir = o.metricsCertDir
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   controller.CacheOptions(o.namespace),
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "plank.examples.jobkit.dev",
		LeaderElectionNamespace: o.leaderElectNamespace,
		// Hand the Lease over at once on shutdown; main exits right after Start.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	r, err := controller.New(mgr.GetClient(), o.cfg)
	if err != nil {
		return err
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := errors.Join(mgr.AddHealthzCheck("ping", healthz.Ping), mgr.AddReadyzCheck("ping", healthz.Ping)); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// verbosity is the -v of the textlogger configuration.
func verbosity(c *textlogger.Config) int {
	n, _ := strconv.Atoi(c.Verbosity().String())
	return n
}
