package cmdflags

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/jobkit/jobkit/examples/internal/clientflags"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// Defaults are what the commands' flags differ in.
type Defaults struct {
	// Objects names what the controller syncs, in the help texts ("Jobs").
	Objects string
	// ManagedBy is the default of --managed-by.
	ManagedBy string
	// Workers is the default of --workers.
	Workers int
	// LeaseNamespace is the default of --leader-elect-namespace; empty means the
	// pod's namespace (the controller-runtime commands).
	LeaseNamespace string
	// MetricsAddr is the default of --metrics-bind-address ("0": off).
	MetricsAddr string
}

// Flags are the parsed values.
type Flags struct {
	Kubeconfig     string
	ManagedBy      string
	Workers        int
	LeaderElect    bool
	LeaseNamespace string
	MetricsAddr    string
	// MetricsSecure serves /metrics over HTTPS with authentication and
	// authorization (controller-runtime's filters).
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key, the certificate of the secure
	// /metrics (a Secret of cert-manager mounted); empty: a self-signed one.
	MetricsCertDir string
	ProbeAddr      string
	// APIBackoff is the requeue delay after a sync failed on an API error:
	// --api-backoff-base doubling to --api-backoff-max.
	APIBackoff plainbackoff.Policy
	RateLimits clientflags.RateLimits
	// LogFormat is --logging-format (FormatText or FormatJSON) and Verbosity
	// klog's -v, read by Logger.
	LogFormat string
	Verbosity int
}

// Set is the flags registered on one FlagSet.
type Set struct {
	fs        *flag.FlagSet
	flags     Flags
	limits    *clientflags.RateLimits
	logFormat *string
}

// Register adds the flags to fs with the defaults d, and klog's flags.
func Register(fs *flag.FlagSet, d Defaults) *Set {
	s := &Set{fs: fs}
	f := &s.flags
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty means $KUBECONFIG, ~/.kube/config or the in-cluster configuration")
	fs.StringVar(&f.ManagedBy, "managed-by", d.ManagedBy, "the spec.managedBy value of the "+d.Objects+" this controller manages")
	fs.IntVar(&f.Workers, "workers", d.Workers, "number of "+d.Objects+" synced at once")
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "hold a Lease so that only one replica syncs "+d.Objects+" at a time")
	nsHelp := "namespace of the leader election Lease"
	if d.LeaseNamespace == "" {
		nsHelp += "; empty means the pod's namespace (required outside a cluster)"
	}
	fs.StringVar(&f.LeaseNamespace, "leader-elect-namespace", d.LeaseNamespace, nsHelp)
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", d.MetricsAddr, `address of the Prometheus /metrics endpoint; "0" disables it`)
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", ":8081", `address of the /healthz and /readyz probes; "0" disables them`)
	fs.BoolVar(&f.MetricsSecure, "metrics-secure", false, "serve /metrics over HTTPS to clients the API server authenticates and authorizes (get on the non-resource URL /metrics)")
	fs.StringVar(&f.MetricsCertDir, "metrics-cert-path", "", "directory of tls.crt and tls.key, the certificate of the secure /metrics (with --metrics-secure); empty means a self-signed one")
	f.APIBackoff = plainbackoff.Policy{Base: time.Second, Max: time.Minute}
	fs.DurationVar(&f.APIBackoff.Base, "api-backoff-base", f.APIBackoff.Base, "requeue delay of one of the "+d.Objects+" whose sync failed on an API error, doubled at each failure in a row (the Job controller's 1s)")
	fs.DurationVar(&f.APIBackoff.Max, "api-backoff-max", f.APIBackoff.Max, "longest requeue delay after API errors (the Job controller's 1m)")
	s.limits = clientflags.Register(fs)
	s.logFormat = RegisterLogFormat(fs)
	klog.InitFlags(fs)
	return s
}

// Parse parses args (without the program name) and checks the values: no
// positional arguments, --workers at least 1, --managed-by not empty, the rate
// limits (clientflags.RateLimits.Validate). Errors name the flag and its value;
// flag.ErrHelp is returned as is for --help.
func (s *Set) Parse(args []string) (Flags, error) {
	if err := s.fs.Parse(args); err != nil {
		return Flags{}, err
	}
	f := s.flags
	f.RateLimits = *s.limits
	f.LogFormat, f.Verbosity = *s.logFormat, Verbosity(s.fs)
	switch {
	case s.fs.NArg() > 0:
		return f, fmt.Errorf("unexpected arguments: %q", s.fs.Args())
	case f.Workers < 1:
		return f, fmt.Errorf("--workers=%d: must be at least 1", f.Workers)
	case f.ManagedBy == "":
		return f, errors.New(`--managed-by="": must not be empty`)
	case f.APIBackoff.Base <= 0:
		return f, fmt.Errorf("--api-backoff-base=%v: must be positive", f.APIBackoff.Base)
	case f.MetricsCertDir != "" && !f.MetricsSecure:
		return f, fmt.Errorf("--metrics-cert-path=%q: needs --metrics-secure", f.MetricsCertDir)
	case f.APIBackoff.Max < f.APIBackoff.Base:
		return f, fmt.Errorf("--api-backoff-max=%v: must be at least --api-backoff-base (%v)", f.APIBackoff.Max, f.APIBackoff.Base)
	}
	return f, f.RateLimits.Validate()
}

// RESTConfig loads the client configuration as kubectl does (--kubeconfig, else
// $KUBECONFIG, ~/.kube/config or the in-cluster configuration), with the rate
// limits applied, userAgent as the user agent and response compression off (as
// kube-controller-manager).
func (f Flags) RESTConfig(userAgent string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster configuration: %w", err)
	}
	f.RateLimits.Apply(cfg)
	// As kube-controller-manager: no gzip between a controller and its API server.
	// The server compresses large responses and watch streams only when asked, and
	// on a local network the compression costs both sides more CPU than it saves.
	cfg.DisableCompression = true
	return rest.AddUserAgent(cfg, userAgent), nil
}

// Logger returns the command's logger for --logging-format and -v (NewLogger),
// writing JSON to standard error.
func (f Flags) Logger() (logr.Logger, error) {
	return NewLogger(f.LogFormat, f.Verbosity, os.Stderr)
}

// Main runs run with the program's arguments until SIGINT or SIGTERM, the main
// function of a controller command named name, and exits with ExitCode.
func Main(name string, run func(ctx context.Context, args []string) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	signalled := ctx.Err() != nil
	stop()
	klog.Flush()
	if code := ExitCode(name, err, signalled, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// ExitCode is how a command ends after run returned err: 0 for --help (flag.ErrHelp)
// and for a stop asked by SIGINT or SIGTERM (signalled), whatever run was doing then
// (waiting for the API server, for the caches, for the lease: an error that the stop
// itself caused is not a failure); otherwise 1 with err written to out after name.
func ExitCode(name string, err error, signalled bool, out io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case signalled:
		fmt.Fprintf(out, "%s: stopped by a signal (%v)\n", name, err)
		return 0
	}
	fmt.Fprintln(out, name+":", err)
	return 1
}

// CheckManagedBy checks the value v of the flag name as the API server checks a
// Job's spec.managedBy: empty, or a domain-prefixed path of at most 63 characters.
func CheckManagedBy(name, v string) error {
	if v == "" {
		return nil
	}
	domain, path, ok := strings.Cut(v, "/")
	if len(v) > 63 || !ok || domain == "" || path == "" {
		return fmt.Errorf("--%s=%q: must be empty or a domain-prefixed path (example.com/name) of at most 63 characters", name, v)
	}
	return nil
}
