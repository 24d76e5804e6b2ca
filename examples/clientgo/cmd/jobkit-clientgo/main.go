// Command jobkit-clientgo runs the client-go Job controller of package clientgo
// against a cluster: it manages the batch/v1 Jobs whose spec.managedBy is its name.
//
//	jobkit-clientgo [--kubeconfig FILE] [--workers 5] [--managed-by jobkit.dev/job-controller]
//	                [--leader-elect] [--leader-elect-namespace kube-system]
//	                [--leader-elect-name jobkit-job-controller]
//	                [--metrics-bind-address :8080] [--health-probe-bind-address :8081]
//	                [--kube-api-qps 20] [--kube-api-burst 30]
//	                [--kube-api-content-type application/vnd.kubernetes.protobuf]
//	                [--logging-format text|json] [-v N] [--profiling]
//	                [--api-backoff-base 1s] [--api-backoff-max 1m]
//	                [--gc-percent 50] [--memory-limit-mib 0]
//
// Without --kubeconfig it uses $KUBECONFIG, ~/.kube/config or the in-cluster
// configuration. Create a Job with spec.managedBy set to the name to hand it over:
// the built-in Job controller then leaves it alone. With --leader-elect, replicas
// share a coordination.k8s.io Lease and only the holder runs the controller; it exits
// when it loses the lease. SIGINT and SIGTERM stop it (and release the lease) and it
// exits 0, whenever they arrive. Started before its API server answers, it waits for
// it (retrying /version, 1 s doubling to 30 s) instead of exiting.
//
// It serves the Kubernetes Job controller's job_controller_* metrics (with the Go
// runtime's and the process's) on /metrics at --metrics-bind-address (over HTTPS
// to the clients the API server authenticates and authorizes with --metrics-secure,
// with the certificate of --metrics-cert-path or a self-signed one), and /healthz
// (200 while the process runs and, with --leader-elect, while the leader renews its
// lease) and /readyz (200 once the informer caches have synced, which they do on a
// standby replica too) at --health-probe-bind-address; "0" turns either off.
// --kube-api-qps and --kube-api-burst bound its requests to the API server
// (kube-controller-manager's defaults; client-go's own 5 and 10 would make a Job of
// 5,000 pods take half an hour). --gc-percent sets the garbage collector's target
// (50 by default, Go's own is 100: the heap grows by half the live heap between
// collections, some CPU for less memory) and --memory-limit-mib a soft limit of the
// Go runtime's memory (none by default: a limit below the live heap makes the
// collector run without end); GOGC and GOMEMLIMIT, when set, win over both.
// --help lists every flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/controllerruntime/metrics"
	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	"github.com/jobkit/jobkit/examples/internal/telemetry"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// options are the command's flags: the ones every example command takes, and the
// lease timings and informer resync of this one.
type options struct {
	cmdflags.Flags
	leaseName     string
	resyncPeriod  time.Duration
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	contentType   string
	profiling     bool
	gc            gcSettings
}

// The encodings --kube-api-content-type takes: protobuf (kube-controller-manager's
// default, cheaper for the API server to serve) or JSON. Only this command has the
// flag: the controller-runtime commands serve custom resources, which have no protobuf.
const (
	contentTypeProtobuf = "application/vnd.kubernetes.protobuf"
	contentTypeJSON     = "application/json"
)

// parseFlags parses args (without the program name) into options; klog's flags
// (-v, ...) are accepted too.
func parseFlags(args []string, output io.Writer) (options, error) {
	fs := flag.NewFlagSet("jobkit-clientgo", flag.ContinueOnError)
	fs.SetOutput(output)
	var o options
	set := cmdflags.Register(fs, cmdflags.Defaults{
		Objects: "Jobs", ManagedBy: clientgo.DefaultName, Workers: 5, LeaseNamespace: "kube-system", MetricsAddr: ":8080",
	})
	fs.StringVar(&o.leaseName, "leader-elect-name", "jobkit-job-controller", "name of the leader election Lease")
	fs.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a lease is held without renewal")
	fs.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader retries renewing before giving up")
	fs.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "time between two attempts to acquire or renew")
	fs.DurationVar(&o.resyncPeriod, "resync-period", 0, "informer resync period (0: none)")
	fs.BoolVar(&o.profiling, "profiling", false, "serve Go's profiles under /debug/pprof/ at --metrics-bind-address (kube-controller-manager's flag; off here, the endpoint has no authentication)")
	fs.StringVar(&o.contentType, "kube-api-content-type", contentTypeProtobuf, "encoding of the requests to the API server: "+contentTypeProtobuf+" or "+contentTypeJSON+" (kube-controller-manager's flag and default)")
	fs.IntVar(&o.gc.percent, "gc-percent", defaultGCPercent, "the garbage collector's target, as GOGC (which wins when set): the heap grows by this percentage of the live heap before a collection; Go's default is 100, less trades CPU for memory")
	fs.IntVar(&o.gc.memoryLimit, "memory-limit-mib", 0, "a soft limit of the Go runtime's memory in MiB, as GOMEMLIMIT (which wins when set): the collector runs more often near it; 0 means none")
	f, err := set.Parse(args)
	o.Flags = f
	if err != nil {
		return o, err
	}
	if err := o.gc.validate(); err != nil {
		return o, err
	}
	if o.contentType != contentTypeProtobuf && o.contentType != contentTypeJSON {
		return o, fmt.Errorf("--kube-api-content-type=%q: want %s or %s", o.contentType, contentTypeProtobuf, contentTypeJSON)
	}
	if o.LeaderElect && (o.LeaseNamespace == "" || o.leaseName == "") {
		return o, errors.New("--leader-elect needs --leader-elect-namespace and --leader-elect-name")
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobkit-clientgo:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, o)
	signalled := ctx.Err() != nil
	stop()
	klog.Flush()
	if code := cmdflags.ExitCode("jobkit-clientgo", err, signalled, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// run wires the options to the controller and runs it until ctx ends (or, with
// leader election, until the lease is lost).
func run(ctx context.Context, o options) error {
	logger, err := o.Logger()
	if err != nil {
		return err
	}
	if set := o.gc.apply(os.Getenv); len(set) > 0 {
		logger.Info("Garbage collector", set...)
	}
	cfg, err := o.Connect(ctx, "jobkit-clientgo", logger)
	if err != nil {
		return err
	}
	// Answers in JSON stay accepted: protobuf exists for the built-in kinds only.
	cfg.ContentType, cfg.AcceptContentTypes = o.contentType, o.contentType+","+contentTypeJSON
	if o.contentType == contentTypeJSON {
		cfg.AcceptContentTypes = contentTypeJSON
	}
	// Pods are decoded without managedFields (clientgo.NewClientset): at 5,000 pods
	// they were most of the bytes decoded from the pod watch.
	cs, err := clientgo.NewClientset(cfg)
	if err != nil {
		return err
	}
	// The informers cache pods trimmed to what the Reconciler reads (clientgo.TrimPods):
	// at 20,000 pods the whole pods were 77 of 85 MB of live heap.
	factory := informers.NewSharedInformerFactoryWithOptions(cs, o.resyncPeriod, informers.WithTransform(clientgo.TrimPods))
	defer factory.Shutdown()
	m := metrics.New(metrics.Subsystem(owner.BatchJob), metrics.JobResource)
	registry := prometheus.NewRegistry()
	metricsAddr := o.MetricsAddr
	if o.MetricsSecure {
		// controller-runtime's metrics server, with its authentication and
		// authorization filters, serves controller-runtime's registry (which has the
		// Go and process collectors) over HTTPS; the plain HTTP endpoint is off.
		if err := m.Register(crmetrics.Registry); err != nil {
			return err
		}
		secure, err := secureMetrics(cfg, o.MetricsAddr, o.MetricsCertDir)
		if err != nil {
			return err
		}
		secureCtx, stopSecure := context.WithCancel(context.WithoutCancel(ctx))
		secureDone := make(chan error, 1)
		go func() { secureDone <- secure.Start(secureCtx) }()
		defer func() {
			stopSecure()
			if err := <-secureDone; err != nil {
				logger.Error(err, "Serving secure metrics failed")
			}
		}()
		metricsAddr = "0"
	} else if err := errors.Join(m.Register(registry),
		registry.Register(collectors.NewGoCollector()),
		registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return err
	}
	ctrl, err := clientgo.New(cs, factory, reconcile.Config{Name: o.ManagedBy, Logger: logger, Metrics: m}, clientgo.Options{APIBackoff: o.APIBackoff})
	if err != nil {
		return err
	}
	if _, err := factory.Batch().V1().Jobs().Informer().AddEventHandler(m.JobEventHandler(o.ManagedBy)); err != nil {
		return err
	}
	var watchdog *leaderelection.HealthzAdaptor
	healthz := map[string]telemetry.Check{"ping": func(*http.Request) error { return nil }}
	if o.LeaderElect {
		// A leader whose lease has expired for longer than a lease duration without
		// being renewed is stuck: unhealthy, so that it is restarted.
		watchdog = leaderelection.NewLeaderHealthzAdaptor(o.leaseDuration)
		healthz["leader-election"] = watchdog.Check
	}
	servers, err := telemetry.Listen(telemetry.Endpoints{
		MetricsAddr: metricsAddr,
		ProbeAddr:   o.ProbeAddr,
		Gatherer:    registry,
		Profiling:   o.profiling,
		Healthz:     healthz,
		Readyz: map[string]telemetry.Check{"caches": func(*http.Request) error {
			if !ctrl.HasSynced() {
				return errors.New("the Job and pod informers have not synced")
			}
			return nil
		}},
	})
	if err != nil {
		return err
	}
	serveCtx, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- servers.Serve(serveCtx) }()
	defer func() {
		stopServing()
		if err := <-served; err != nil {
			logger.Error(err, "Serving metrics and probes failed")
		}
	}()
	logger.Info("Serving", "metrics", servers.MetricsAddr(), "probes", servers.ProbeAddr())
	// The caches fill before the lease is won, so that a standby is ready and takes
	// over with a warm cache; Run starts nothing twice.
	factory.Start(ctx.Done())
	if !o.LeaderElect {
		return ctrl.Run(ctx, o.Workers)
	}

	host, _ := os.Hostname()
	id := host + "_" + string(uuid.NewUUID())
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaseNamespace, Name: o.leaseName},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	// The elector calls OnStartedLeading on a goroutine of its own; the controller
	// runs here instead, so that run returns only once it has stopped.
	leading := make(chan context.Context, 1)
	var lost atomic.Bool
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		Name:            o.leaseName,
		LeaseDuration:   o.leaseDuration,
		RenewDeadline:   o.renewDeadline,
		RetryPeriod:     o.retryPeriod,
		ReleaseOnCancel: true,
		WatchDog:        watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaseCtx context.Context) {
				logger.Info("Acquired the lease", "lease", o.LeaseNamespace+"/"+o.leaseName, "identity", id)
				leading <- leaseCtx // cancelled when the lease is lost or ctx ends
			},
			OnStoppedLeading: func() {
				lost.Store(ctx.Err() == nil)
				logger.Info("No longer the leader", "identity", id, "lost", lost.Load())
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	elected := make(chan struct{})
	go func() {
		defer close(elected)
		elector.Run(ctx) // returns when ctx ends or the lease is lost
	}()
	var runErr error
	select {
	case leaseCtx := <-leading:
		runErr = ctrl.Run(leaseCtx, o.Workers)
		<-elected
	case <-elected: // ctx ended before the lease was acquired
	}
	if lost.Load() {
		return errors.New("lost the leader election lease")
	}
	return runErr
}

// secureMetrics is controller-runtime's metrics server of its registry at addr:
// HTTPS (the certificate of certDir, or a self-signed one when it is empty), and
// only for clients the API server of cfg authenticates and authorizes to get
// /metrics (reviewFilter: TokenReview and SubjectAccessReview, as
// controllerruntime/securemetrics, without k8s.io/apiserver).
func secureMetrics(cfg *rest.Config, addr, certDir string) (metricsserver.Server, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("--metrics-secure: %w", err)
	}
	srv, err := metricsserver.NewServer(metricsserver.Options{
		BindAddress: addr, SecureServing: true, CertDir: certDir, FilterProvider: reviewFilter,
	}, cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("--metrics-secure: %w", err)
	}
	return srv, nil
}
