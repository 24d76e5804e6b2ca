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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
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
	// to) is required; Owner is the kind of T (zero: batch/v1 Job), whose
	// Finalizer tracks the pods the owners control. A kind of child-Jobs groups
	// only (Type.ChildJobsOnly) controls no pod and never uses a finalizer:
	// there a zero Owner is the kind the scheme names for T, and an empty
	// Finalizer is "jobkit.dev/owns-no-pods", which no object carries; the kind still
	// names the metrics ("jobset_controller"), the event actions ("SyncJobSet")
	// and the reason of refusals ("InvalidJobSet"). Zero fields
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
	// controller of its own); the owner's syncs do not read them. A Type with
	// the child-Jobs shape owns batch/v1 Jobs and core/v1 Services without
	// being told (its syncs create and read them); listing them again is
	// harmless.
	Owns []client.Object
	// ChildManagedBy, for a Type with the child-Jobs shape, is the spec.managedBy
	// of the child Jobs created (childjobs.Input.ChildManagedBy, unless the
	// conversion set it), so that the Job controller of that name (a jobkit one,
	// Setup with reconcile.JobType) runs them; empty leaves them to the
	// kube-controller-manager. Set only with Type.ChildJobs.
	ChildManagedBy string
	// InPlaceRestart, for a Type with the child-Jobs shape, watches the pods
	// labelled with a group's name (plaingroup.LabelJobSetName) and hands a
	// group under restartStrategy InPlaceRestart its pods
	// (childjobs.Input.Pods), so that its in-place restart barrier moves as
	// the pods' agents report their attempts. It caches the pods of the
	// namespaces watched, as JobSet's controller does with its InPlaceRestart
	// feature gate on. Off, a group under InPlaceRestart runs as under
	// Recreate (no group is refused for it). Set only with Type.ChildJobs.
	InPlaceRestart bool
	// ClaimsAndBudgets, for a Type with the child-Jobs shape, caches the core/v1
	// PersistentVolumeClaims and policy/v1 PodDisruptionBudgets of the
	// namespaces watched (owning them, so that a deleted one queues its
	// group) and tells each sync which of its group's claims
	// (childjobs.Input.ExistingClaims) and whether its budget
	// (childjobs.Input.DisruptionBudgetExists) exist: a running group then
	// creates each once, where otherwise every sync sends their creations
	// (answered AlreadyExists), as JobSet does. It needs list and watch on
	// both. Set only with Type.ChildJobs.
	ClaimsAndBudgets bool
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
//
// Pods are listed as the informer's own objects, with Config.ImmutablePods, when
// mgr's cache exposes its store ("What Setup registers" in the package doc).
//
// Setup does not configure mgr's cache: create mgr with reconcile.TrimPod as
// the pods' transform (the package documentation, "Caching pods", shows how), or
// the cached pods are most of the controller's memory at scale.
func Setup[T client.Object](mgr manager.Manager, opts Options[T]) (*Controller[T], error) {
	if err := opts.validate(mgr); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	cfg := opts.Config
	owner, err := opts.owner(mgr.GetScheme())
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	cfg.Owner = owner
	name := cmp.Or(opts.Name, strings.ToLower(cfg.Owner.Kind))
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = mgr.GetLogger().WithName(name)
	}
	if cfg.Events == nil {
		rec, err := EventRecorder(mgr, cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
		}
		cfg.Events = syncEvents(rec, "Sync"+cfg.Owner.Kind, childObject(opts.Type))
	}
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
	opts.Config = cfg
	pods := !opts.Type.ChildJobsOnly()
	store, err := podIndexer(context.Background(), mgr.GetCache(), pods)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: index pods by namespace and controller UID: %w", err)
	}
	c, err := newController(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), store, mgr.GetScheme(), opts)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	if pods {
		if err := indexOnce(mgr, &corev1.Pod{}); err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: index pods by controller UID: %w", err)
		}
	}
	if opts.Type.ChildJobs != nil {
		if err := indexOnce(mgr, &batchv1.Job{}); err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: index Jobs by controller UID: %w", err)
		}
	}
	managed := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		t, ok := obj.(T)
		return ok && c.o.manages(t)
	})
	b := builder.ControllerManagedBy(mgr).
		Named(name).
		For(opts.Type.New(), builder.WithPredicates(managed, noUpdates)).
		Watches(opts.Type.New(), c.o.ownerEvents(), builder.WithPredicates(managed))
	if pods {
		b = b.Watches(&corev1.Pod{}, podEventHandler(c.o.handlePod))
	}
	if opts.InPlaceRestart {
		b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(groupOfPod))
	}
	for _, obj := range opts.owns() {
		b = b.Owns(obj)
	}
	backoff := opts.apiBackoff()
	err = b.WithOptions(controller.Options{
		MaxConcurrentReconciles: cmp.Or(opts.Workers, DefaultWorkers),
		SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[crreconcile.Request](backoff.Base, backoff.Max),
	}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: build controller %s: %w", name, err)
	}
	if pods {
		if err := mgr.Add(&orphanWorker{queue: c.o.orphans, clean: c.o.cleanOrphan, log: c.o.log, workers: opts.OrphanWorkers}); err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: add orphan worker: %w", err)
		}
	}
	return c, nil
}

// NewController builds the Controller that Setup registers, without a manager:
// no watch, no index, no orphan worker, no default Events or Metrics (nil
// ones are reconcile.New's). It is for tests over controller-runtime's fake
// client: Reconcile reads owners, pods and child Jobs from cache, which must
// index pods and Jobs by OwnerUIDIndex (fake.ClientBuilder.WithIndex with
// OwnerUID), and writes through c, whose scheme must know T; Config.ReadOwner
// defaults to a read through c, and Config.ImmutablePods is cleared (cache's
// List copies the pods). opts is checked as Setup checks it.
func NewController[T client.Object](c client.Client, cache client.Reader, opts Options[T]) (*Controller[T], error) {
	if c == nil || cache == nil {
		return nil, errors.New("controllerruntime.NewController: client or cache is nil")
	}
	if err := opts.validateFields(); err != nil {
		return nil, fmt.Errorf("controllerruntime.NewController: %w", err)
	}
	owner, err := opts.owner(c.Scheme())
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.NewController: %w", err)
	}
	opts.Config.Owner = owner
	ctl, err := newController(c, c, cache, nil, c.Scheme(), opts)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.NewController: %w", err)
	}
	return ctl, nil
}

// newController builds the Controller of opts (whose Config.Owner is set),
// writing through c, reading owners and pods live through live (ReadOwner, a
// pod's GetPod), from store pods when not nil (Config.ImmutablePods), from cache.
func newController[T client.Object](c client.Client, live, cache client.Reader, pods toolscache.Indexer, scheme *runtime.Scheme, opts Options[T]) (*Controller[T], error) {
	cfg := opts.Config
	cfg.ImmutablePods = pods != nil
	if cfg.ReadOwner == nil {
		typ := opts.Type
		cfg.ReadOwner = reconcile.ObjectOwnerReader(func(ctx context.Context, namespace, name string) (T, error) {
			obj := typ.New()
			return obj, live.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj)
		}, typ.Owner)
	}
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	rec, err := reconcile.New(cfg, newAPIClient(c, live), statusWriter[T]{c: c, typ: opts.Type})
	if err != nil {
		return nil, err
	}
	backoff := opts.apiBackoff()
	name := cmp.Or(opts.Name, strings.ToLower(cfg.Owner.Kind))
	return &Controller[T]{o: ownerOf[T]{
		rec:     rec,
		cfg:     cfg,
		cache:   cache,
		pods:    pods,
		client:  c,
		scheme:  scheme,
		typ:     opts.Type,
		invalid: "Invalid" + cfg.Owner.Kind,
		orphans: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](backoff.Base, backoff.Max),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: name + "-orphan-pods"}),
		childManagedBy: opts.ChildManagedBy,
		inPlace:        opts.InPlaceRestart,
		planned:        opts.ClaimsAndBudgets,
		onSync:         opts.OnSync,
		log:            cfg.Logger,
	}}, nil
}

// validate names the first missing or bad field of o.
func (o *Options[T]) validate(mgr manager.Manager) error {
	if mgr == nil {
		return errors.Join(errors.New("manager is nil"), o.validateFields())
	}
	return o.validateFields()
}

// validateFields names every missing or bad field of o.
func (o *Options[T]) validateFields() error {
	var errs []error
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
	if o.ChildManagedBy != "" && o.Type.ChildJobs == nil {
		errs = append(errs, errors.New("Options.ChildManagedBy is set, Options.Type.ChildJobs is not: only groups of child Jobs create Jobs"))
	}
	if o.InPlaceRestart && o.Type.ChildJobs == nil {
		errs = append(errs, errors.New("Options.InPlaceRestart is set, Options.Type.ChildJobs is not: only groups of child Jobs restart in place"))
	}
	if o.ClaimsAndBudgets && o.Type.ChildJobs == nil {
		errs = append(errs, errors.New("Options.ClaimsAndBudgets is set, Options.Type.ChildJobs is not: only groups of child Jobs create claims and budgets"))
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

// noPodsFinalizer is the Finalizer Setup gives Config.Owner, for a kind of
// child-Jobs groups only, when it names none: such owners control no pod, so
// no object ever carries it; it only lets the kind pass owner.Kind.Validate.
const noPodsFinalizer = "jobkit.dev/owns-no-pods"

// owner returns Config.Owner with its default: batch/v1 Job, or for a kind of
// child-Jobs groups only the kind of T in scheme, with noPodsFinalizer when it
// names no finalizer.
func (o *Options[T]) owner(scheme *runtime.Scheme) (owner.Kind, error) {
	k := o.Config.Owner
	if !o.Type.ChildJobsOnly() {
		if k == (owner.Kind{}) {
			k = owner.BatchJob
		}
		return k, nil
	}
	if k.Kind == "" {
		gvk, err := apiutil.GVKForObject(o.Type.New(), scheme)
		if err != nil {
			return k, fmt.Errorf("the kind of the owners: %w", err)
		}
		k.Group, k.Version, k.Kind = gvk.Group, gvk.Version, gvk.Kind
	}
	k.Finalizer = cmp.Or(k.Finalizer, noPodsFinalizer)
	return k, nil
}

// apiBackoff returns APIBackoff with its defaults.
func (o *Options[T]) apiBackoff() plainbackoff.Policy {
	return plainbackoff.Policy{Base: cmp.Or(o.APIBackoff.Base, DefaultAPIBackoffBase), Max: cmp.Or(o.APIBackoff.Max, DefaultAPIBackoffMax)}
}
