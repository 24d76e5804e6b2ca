package controllerruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
)

// Defaults of Options.
const (
	// DefaultWorkers is how many owners are synced at once when Options.Workers is
	// zero: the Job controller's --concurrent-job-syncs default.
	DefaultWorkers = 5
	// DefaultAPIBackoffBase and DefaultAPIBackoffMax are the requeue delays after a
	// sync (or an orphan cleanup) that failed on an API error, when
	// Options.APIBackoff leaves them zero: 1s doubling to 1m, as the Job controller.
	DefaultAPIBackoffBase = time.Second
	DefaultAPIBackoffMax  = time.Minute
)

// Type is reconcile.Type, the description of an owner type.
//
// Deprecated: use reconcile.Type, which the test rig (reconciletest) reads too.
type Type[T client.Object] = reconcile.Type[T]

// Options configure Setup. The zero value of every field but Type and Config.Name
// is usable.
type Options[T client.Object] struct {
	// Type is the owner type's conversions (reconcile.JobType for batch/v1
	// Jobs). Required.
	Type reconcile.Type[T]
	// Config is the Reconciler's. Name (the spec.managedBy this controller answers
	// to) is required; Owner is the kind of T (zero: batch/v1 Job). Zero fields
	// take defaults: Logger the manager's, Events an events.k8s.io/v1 recorder on
	// the manager's connection, Metrics the Prometheus metrics of package metrics
	// registered with controller-runtime's registry (served by the manager),
	// ReadOwner an uncached read through the manager's APIReader.
	Config reconcile.Config
	// Name names the controller in logs and in controller-runtime's workqueue
	// metrics; empty means the owner kind in lower case ("job", "trainingjob").
	Name string
	// Workers is how many owners are synced at once; zero means DefaultWorkers.
	Workers int
	// OrphanWorkers is how many orphan pods are cleaned at once; zero means 1.
	OrphanWorkers int
	// APIBackoff is the requeue delay of an owner whose sync failed (and of an
	// orphan pod whose cleanup failed), per key, doubling with each failure in a
	// row; zero fields mean DefaultAPIBackoffBase and DefaultAPIBackoffMax. It is
	// client-go's per-item exponential rate limiter.
	APIBackoff plainbackoff.Policy
	// MetricsSubsystem prefixes the metrics of the default Config.Metrics; empty
	// means metrics.Subsystem of Config.Owner ("job_controller" for batch/v1 Jobs,
	// "trainingjob_controller" for a kind TrainingJob).
	MetricsSubsystem string
	// SkipNameValidation lets several managers in one process register a
	// controller of the same name (tests that restart it).
	SkipNameValidation bool
	// Owns lists further types of objects the owner controls besides its pods (a
	// headless Service for its pods' hostnames, a ConfigMap): an event of one
	// queues the owner its controller reference names, as controller-runtime's
	// builder Owns does. The caller's code creates them (in OnSync, or a
	// controller of its own); the owner's syncs do not read them.
	Owns []client.Object
	// OnSync, when set, is called after each sync with what it returned. It runs on
	// the worker and must be quick.
	OnSync func(obj T, res reconcile.Result, err error)
}

// Controller is a controller of owners T registered by Setup. It implements
// controller-runtime's reconcile.Reconciler; the manager runs it.
type Controller[T client.Object] struct {
	o ownerOf[T]
}

var _ crreconcile.Reconciler = (*Controller[*batchv1.Job])(nil)

// Reconciler returns the jobkit Reconciler the controller runs. Its stores are
// those of Options.Config when set there (nil ones are created by New).
func (c *Controller[T]) Reconciler() *reconcile.Reconciler { return c.o.rec }

// Reconcile syncs one owner from the cache. An owner missing from the cache is
// forgotten (its expectations and backoff record dropped: only this worker syncs the
// key, so a late event cannot drop those of an owner recreated under the name);
// its pods' finalizers are the orphan worker's. One that this controller does not
// manage is left alone. A sync error is returned, so that the key is retried after
// Options.APIBackoff; the sync's RequeueAfter is returned as is.
func (c *Controller[T]) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	return c.o.reconcileKey(ctx, req)
}

// Setup registers with mgr a controller of the owners T whose spec.managedBy is
// opts.Config.Name: the field index OwnerUIDIndex on pods (once per manager), the
// owner watch (additions and deletions synced at once, updates through
// Reconciler.ObserveOwnerEvent), the pod watch (each event given to
// Reconciler.ObservePodEvent before the owners it names are queued) and a worker
// that removes the tracking finalizer of pods whose owner is gone, replaced or
// finished (Reconciler.CleanOrphan). The controller and the worker run only while
// mgr holds its leader lease when leader election is on. mgr's scheme must know T
// and its list type.
func Setup[T client.Object](mgr manager.Manager, opts Options[T]) (*Controller[T], error) {
	if err := opts.validate(mgr); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	cfg := opts.Config
	if cfg.Owner == (owner.Kind{}) {
		cfg.Owner = owner.BatchJob
	}
	name := cmp.Or(opts.Name, strings.ToLower(cfg.Owner.Kind))
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = mgr.GetLogger().WithName(name)
	}
	if cfg.Events == nil {
		rec, err := EventRecorder(mgr, cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
		}
		cfg.Events = syncEvents(rec, "Sync"+cfg.Owner.Kind)
	}
	c := &Controller[T]{}
	if cfg.Metrics == nil {
		m, err := defaultMetrics(mgr, cfg.Owner, opts.MetricsSubsystem)
		if err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
		}
		cfg.Metrics = m
		if err := addMetricsHandler(mgr, m, cfg, opts.Type); err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
		}
	}
	if cfg.ReadOwner == nil {
		api, typ := mgr.GetAPIReader(), opts.Type
		cfg.ReadOwner = reconcile.ObjectOwnerReader(func(ctx context.Context, namespace, name string) (T, error) {
			obj := typ.New()
			return obj, api.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
		}, typ.Owner)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	rec, err := reconcile.New(cfg, newAPIClient(mgr.GetClient(), mgr.GetAPIReader()), statusWriter[T]{c: mgr.GetClient(), typ: opts.Type})
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	backoff := opts.apiBackoff()
	c.o = ownerOf[T]{
		rec:     rec,
		cfg:     cfg,
		cache:   mgr.GetCache(),
		client:  mgr.GetClient(),
		scheme:  mgr.GetScheme(),
		typ:     opts.Type,
		invalid: "Invalid" + cfg.Owner.Kind,
		orphans: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](backoff.Base, backoff.Max),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: name + "-orphan-pods"}),
		onSync: opts.OnSync,
		log:    cfg.Logger,
	}
	if err := indexPods(mgr); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: index pods by controller UID: %w", err)
	}
	managed := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		t, ok := obj.(T)
		return ok && c.o.manages(t)
	})
	b := builder.ControllerManagedBy(mgr).
		Named(name).
		For(opts.Type.New(), builder.WithPredicates(managed, noUpdates)).
		Watches(opts.Type.New(), c.o.ownerEvents(), builder.WithPredicates(managed)).
		Watches(&corev1.Pod{}, podEventHandler(c.o.handlePod))
	for _, obj := range opts.Owns {
		b = b.Owns(obj)
	}
	err = b.WithOptions(controller.Options{
		MaxConcurrentReconciles: cmp.Or(opts.Workers, DefaultWorkers),
		SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[crreconcile.Request](backoff.Base, backoff.Max),
	}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: build controller %s: %w", name, err)
	}
	if err := mgr.Add(&orphanWorker{queue: c.o.orphans, clean: c.o.cleanOrphan, log: cfg.Logger, workers: opts.OrphanWorkers}); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: add orphan worker: %w", err)
	}
	return c, nil
}

// validate names the first missing or bad field of o.
func (o *Options[T]) validate(mgr manager.Manager) error {
	var errs []error
	if mgr == nil {
		errs = append(errs, errors.New("manager is nil"))
	}
	if err := o.Type.Validate(); err != nil {
		each := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			each = j.Unwrap()
		}
		for _, e := range each {
			errs = append(errs, fmt.Errorf("Options.%w", e))
		}
	}
	for i, obj := range o.Owns {
		if obj == nil {
			errs = append(errs, fmt.Errorf("Options.Owns[%d] is nil", i))
		}
	}
	if (o.Type.Roles == nil) != (o.Type.SetRolesStatus == nil) {
		errs = append(errs, fmt.Errorf("Options.Type: Roles set %v, SetRolesStatus set %v: set both or neither",
			o.Type.Roles != nil, o.Type.SetRolesStatus != nil))
	}
	if o.Config.Name == "" {
		errs = append(errs, errors.New("Options.Config.Name is empty: name the controller (its spec.managedBy)"))
	}
	if o.Workers < 0 || o.OrphanWorkers < 0 {
		errs = append(errs, fmt.Errorf("Options.Workers %d, Options.OrphanWorkers %d: must not be negative", o.Workers, o.OrphanWorkers))
	}
	if o.APIBackoff.Base < 0 || o.APIBackoff.Max < 0 {
		errs = append(errs, fmt.Errorf("Options.APIBackoff {Base %v, Max %v}: must not be negative", o.APIBackoff.Base, o.APIBackoff.Max))
	}
	return errors.Join(errs...)
}

// apiBackoff returns APIBackoff with its defaults.
func (o *Options[T]) apiBackoff() plainbackoff.Policy {
	return plainbackoff.Policy{Base: cmp.Or(o.APIBackoff.Base, DefaultAPIBackoffBase), Max: cmp.Or(o.APIBackoff.Max, DefaultAPIBackoffMax)}
}
