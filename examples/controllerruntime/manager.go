package controllerruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/jobkit/jobkit/controllerruntime/securemetrics"
	"github.com/jobkit/jobkit/reconcile"
)

// ManagerOptions configure NewManager.
type ManagerOptions struct {
	// LeaderElection makes the manager run the controller only while it holds a
	// Lease, so that several replicas can run with one active.
	LeaderElection bool
	// LeaderElectionID names the Lease; empty means LeaseName of the controller's
	// spec.managedBy name (ManagedByName).
	LeaderElectionID string
	// LeaderElectionNamespace holds the Lease; empty means the pod's namespace when
	// running in a cluster (controller-runtime fails outside a cluster).
	LeaderElectionNamespace string
	// ManagedByName is the spec.managedBy name the controller answers to, used for
	// the Lease name; empty means DefaultManagedBy.
	ManagedByName string
	// MetricsBindAddress is where controller-runtime serves its Prometheus metrics
	// (/metrics: the job_controller_* metrics Setup registers and
	// controller-runtime's own); empty or "0" serves none.
	MetricsBindAddress string
	// SecureMetrics serves /metrics over HTTPS to clients the API server
	// authenticates and authorizes (securemetrics.Options: controller-runtime's
	// filters.WithAuthenticationAndAuthorization), instead of plain HTTP.
	SecureMetrics bool
	// MetricsCertDir is the directory of tls.crt and tls.key, the certificate
	// of the secure /metrics; empty means a self-signed one made at the start.
	MetricsCertDir string
	// HealthProbeBindAddress is where /healthz (the process answers) and /readyz
	// (the manager's caches have synced) are served; empty or "0" serves none.
	HealthProbeBindAddress string
	// Logger is the manager's logger, which the controller uses too; the zero
	// Logger (and logr.Discard()) discards the logs.
	Logger logr.Logger
	// SkipNameValidation lets several managers in one process register controllers
	// of the same name (tests that restart the controller).
	SkipNameValidation bool
	// Scheme holds the types the manager's clients and caches know; nil means
	// client-go's (the built-in types). A controller of a custom resource adds its
	// types to a scheme of its own (examples/trainingjob).
	Scheme *runtime.Scheme
}

// NewManager returns a manager for the controller: leader election as asked (the
// Lease released on shutdown), managedFields stripped from cached objects, and
// metrics served only when an address is given.
func NewManager(cfg *rest.Config, o ManagerOptions) (manager.Manager, error) {
	if cfg == nil {
		return nil, errors.New("controllerruntime.NewManager: rest config is nil")
	}
	id := o.LeaderElectionID
	if id == "" {
		id = LeaseName(cmp.Or(o.ManagedByName, DefaultManagedBy))
	}
	bind := o.MetricsBindAddress
	if bind == "" {
		bind = "0"
	}
	mo := manager.Options{
		LeaderElection:                o.LeaderElection,
		LeaderElectionID:              id,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: bind},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		Cache:                         cacheOptions(),
		Controller:                    config.Controller{SkipNameValidation: ptr.To(o.SkipNameValidation)},
		Scheme:                        o.Scheme,
	}
	if o.SecureMetrics && bind != "0" {
		mo.Metrics = securemetrics.Options(bind)
		mo.Metrics.CertDir = o.MetricsCertDir
	}
	mo.Logger = o.Logger
	if mo.Logger.GetSink() == nil {
		// manager.New would take a nil sink for "unset" and log to the global
		// logger, which warns when log.SetLogger was never called.
		mo.Logger = logr.New(discardSink{})
	}
	mgr, err := manager.New(cfg, mo)
	if err == nil {
		err = mgr.AddHealthzCheck("ping", healthz.Ping)
	}
	if err == nil {
		err = mgr.AddReadyzCheck("caches", cachesSynced(mgr.GetCache()))
	}
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.NewManager: %w", err)
	}
	return mgr, nil
}

// CacheSyncProbeTimeout bounds how long a /readyz request waits for the caches.
const CacheSyncProbeTimeout = time.Second

// cachesSynced is the readiness check: the informers the controller reads have
// synced (they start before leader election, so a standby replica is ready too).
func cachesSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), CacheSyncProbeTimeout)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the informer caches have not synced")
		}
		return nil
	}
}

// LeaseName turns a spec.managedBy name into a Lease name: lower case, with every
// character other than a letter, a digit, '.' or '-' replaced by '-'.
// "jobkit.dev/job-controller" gives "jobkit.dev-job-controller".
func LeaseName(managedBy string) string {
	b := []byte(strings.ToLower(managedBy))
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), ".-")
}

// Running is a manager started by Start.
type Running struct {
	// Manager is the started manager; Controller the controller it runs.
	Manager    manager.Manager
	Controller *Controller

	cancel context.CancelFunc
	done   chan error
}

// Stop stops the manager and waits for it (its workers, the Lease release) to end;
// it returns the manager's error, if any. Calling it again returns the same error.
func (r *Running) Stop() error {
	r.cancel()
	err := <-r.done
	r.done <- err
	return err
}

// Start builds a manager (NewManager) running the controller (Setup) and starts it
// in a goroutine, to run until ctx ends or Stop is called. It returns once the
// manager is elected leader (at once without leader election) and its caches have
// synced, or with the error that stopped the manager, or ctx's error.
func Start(ctx context.Context, cfg *rest.Config, mo ManagerOptions, rc reconcile.Config, o Options) (*Running, error) {
	if mo.ManagedByName == "" {
		mo.ManagedByName = rc.Name
	}
	mgr, err := NewManager(cfg, mo)
	if err != nil {
		return nil, err
	}
	c, err := Setup(mgr, rc, o)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	r := &Running{Manager: mgr, Controller: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(runCtx) }()
	select {
	case <-mgr.Elected():
	case err := <-r.done:
		cancel()
		r.done <- err
		return nil, fmt.Errorf("controllerruntime.Start: manager stopped: %w", err)
	case <-ctx.Done():
		_ = r.Stop()
		return nil, ctx.Err()
	}
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
	defer cancelSync()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		_ = r.Stop()
		return nil, errors.New("controllerruntime.Start: caches did not sync within a minute")
	}
	return r, nil
}

// discardSink is a logr.LogSink that drops everything.
type discardSink struct{}

func (discardSink) Init(logr.RuntimeInfo)            {}
func (discardSink) Enabled(int) bool                 { return false }
func (discardSink) Info(int, string, ...any)         {}
func (discardSink) Error(error, string, ...any)      {}
func (d discardSink) WithValues(...any) logr.LogSink { return d }
func (d discardSink) WithName(string) logr.LogSink   { return d }

// cacheOptions are the manager's cache options: every object is cached without its
// managedFields, and a pod as reconcile.TrimPod leaves it (what the Reconciler
// reads: metadata, the containers' names and restart policies, the node, the
// phase, conditions and container states). At 20,000 pods the whole pods were
// most of a controller's heap. Every pod write of the controller is a patch of its
// own fields or a delete, so no trimmed pod is sent back; code of your own in the
// same manager that reads more of a pod needs a manager without this transform.
func cacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Transform: trimPod},
		},
	}
}

// trimPod is the pod cache's transform: reconcile.TrimPod of each pod; anything
// else (a tombstone) passes through.
func trimPod(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return reconcile.TrimPod(pod), nil
	}
	return obj, nil
}
