package controllerruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/examples/internal/crowner"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	// DefaultManagedBy is the spec.managedBy value this controller answers to when
	// reconcile.Config.Name is empty.
	DefaultManagedBy = "jobkit.dev/job-controller"
	// DefaultControllerName names the controller in controller-runtime's logs and
	// metrics when Options.ControllerName is empty.
	DefaultControllerName = "jobkit-job"
	// DefaultWorkers is the number of Jobs synced at once when Options.Workers is
	// zero: upstream's --concurrent-job-syncs default.
	DefaultWorkers = 5

	// OwnerUIDIndex is the field index of pods by the UID of their controller
	// (any kind); pods without a controller are indexed under NoController.
	OwnerUIDIndex = "jobkit.dev/controller-uid"
	// NoController is the OwnerUIDIndex value of pods without a controller: the
	// candidates for adoption.
	NoController = "<none>"
)

// Options configure the controller besides the reconcile.Config.
type Options struct {
	// Workers is how many Jobs are synced at once (MaxConcurrentReconciles); zero
	// means DefaultWorkers.
	Workers int
	// OrphanWorkers is how many orphan pods have their finalizer removed at once;
	// zero means 1.
	OrphanWorkers int
	// ControllerName names the controller (logs, workqueue metrics); empty means
	// DefaultControllerName.
	ControllerName string
	// SkipNameValidation lets several managers in one process register a controller
	// of the same name (tests that restart the controller).
	SkipNameValidation bool
	// OnSync, when set, is called after each sync of a Job with what the sync
	// returned (progress output, tests). It runs on the worker and must be quick.
	OnSync func(job *batchv1.Job, res reconcile.Result, err error)
}

// Controller syncs the batch/v1 Jobs whose spec.managedBy is its name with a
// reconcile.Reconciler, on a controller-runtime manager. It implements
// controller-runtime's reconcile.Reconciler; Setup builds and registers it.
type Controller struct {
	rec     *reconcile.Reconciler
	cache   client.Reader
	name    string
	log     logr.Logger
	owner   *crowner.Owner[*batchv1.Job]
	orphans workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// Setup builds the controller and registers it with mgr: the field index
// OwnerUIDIndex on pods, the Job controller (Jobs filtered by ManagedBy, pod events
// through a handler that observes the Reconciler's expectations) and the orphan pod
// worker. Both run only while mgr holds the leader lease when leader election is on.
//
// Zero fields of cfg get their defaults: Name DefaultManagedBy, Logger the manager's
// logger, Events the manager's events.k8s.io/v1 recorder named after Name, Metrics
// DefaultMetrics (served by the manager's metrics endpoint). The
// Reconciler writes through mgr.GetClient() and reads Jobs and pods from
// mgr.GetCache().
func Setup(mgr manager.Manager, cfg reconcile.Config, opts Options) (*Controller, error) {
	if mgr == nil {
		return nil, errors.New("controllerruntime.Setup: manager is nil")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultManagedBy
	}
	if opts.Workers < 0 || opts.OrphanWorkers < 0 {
		return nil, fmt.Errorf("controllerruntime.Setup: Workers %d, OrphanWorkers %d: must not be negative", opts.Workers, opts.OrphanWorkers)
	}
	name := opts.ControllerName
	if name == "" {
		name = DefaultControllerName
	}
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = mgr.GetLogger().WithName(name)
	}
	if cfg.Events == nil {
		rec, err := ManagerEventRecorder(mgr, cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
		}
		cfg.Events = NewEventRecorder(rec)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = DefaultMetrics()
	}
	if m, ok := cfg.Metrics.(*Metrics); ok {
		// Before the manager starts, GetInformer registers the informer the builder
		// uses too, without waiting for it.
		inf, err := mgr.GetCache().GetInformer(context.Background(), &batchv1.Job{})
		if err == nil {
			_, err = inf.AddEventHandler(m.JobEventHandler(cfg.Name))
		}
		if err != nil {
			return nil, fmt.Errorf("controllerruntime.Setup: Job informer for the metrics: %w", err)
		}
	}
	if cfg.ReadOwner == nil {
		// Before adopting orphans, read the Job from the API server, not the
		// cache: a Job deleted since the cache last heard adopts nothing.
		api := mgr.GetAPIReader()
		cfg.ReadOwner = reconcile.JobOwnerReader(func(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
			job := &batchv1.Job{}
			return job, api.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, job)
		})
	}
	kc := NewClient(mgr.GetClient(), mgr.GetAPIReader())
	rec, err := reconcile.New(cfg, kc, reconcile.JobStatusWriter(kc))
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: %w", err)
	}
	c := &Controller{
		rec:   rec,
		cache: mgr.GetCache(),
		name:  cfg.Name,
		log:   cfg.Logger,
		orphans: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: name + "-orphan-pods"}),
	}
	c.owner = &crowner.Owner[*batchv1.Job]{
		Rec:      rec,
		Cache:    c.cache,
		New:      func() *batchv1.Job { return &batchv1.Job{} },
		Manages:  func(job *batchv1.Job) bool { return IsManagedBy(job, c.name) },
		Workload: func(job *batchv1.Job) (*plan.Workload, error) { return plan.JobWorkload(job), nil },
		Facts:    finalizers.JobOwner,
		ListPods: c.listPods,
		PodIndex: OwnerUIDIndex,
		Orphans:  c.orphans,
		Adopters: c.adopters,
		OnSync:   opts.OnSync,
		Log:      c.log,
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, OwnerUIDIndex, OwnerUID); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: index pods by controller UID: %w", err)
	}
	managed := ManagedBy(cfg.Name)
	err = builder.ControllerManagedBy(mgr).
		Named(name).
		// Additions and deletions sync at once; updates go through
		// Reconciler.ObserveOwnerEvent, which delays status-only ones (this
		// controller's own writes among them) by the batch period.
		For(&batchv1.Job{}, builder.WithPredicates(managed, crowner.NoUpdates)).
		Watches(&batchv1.Job{}, c.owner.OwnerEvents(), builder.WithPredicates(managed)).
		Watches(&corev1.Pod{}, PodEventHandler(c.owner.HandlePod)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(opts.Workers, DefaultWorkers),
			SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: build controller %s: %w", name, err)
	}
	if err := mgr.Add(&OrphanWorker{Queue: c.orphans, Clean: c.owner.CleanOrphan, Log: c.log, Workers: opts.OrphanWorkers}); err != nil {
		return nil, fmt.Errorf("controllerruntime.Setup: add orphan worker: %w", err)
	}
	return c, nil
}

// Reconciler returns the jobkit Reconciler the controller runs (its stores, its
// configuration with defaults filled in).
func (c *Controller) Reconciler() *reconcile.Reconciler { return c.rec }

// Reconcile syncs one Job from the cache (crowner.Owner.Reconcile): a Job missing
// from the cache is forgotten (its expectations and backoff record dropped); its
// pods' finalizers are the orphan worker's. A sync error is returned, so the
// workqueue retries with rate limiting; the sync's RequeueAfter is returned as is.
func (c *Controller) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	return c.owner.Reconcile(ctx, req)
}

// listPods lists, from the cache and without copies (the Reconciler never modifies
// its inputs), the pods controlled by w and the pods without controller in its
// namespace that match its selector.
func (c *Controller) listPods(ctx context.Context, w *plan.Workload) ([]*corev1.Pod, error) {
	pods, err := crowner.ListOwned(ctx, c.cache, OwnerUIDIndex, w)
	if err != nil {
		return nil, err
	}
	if w.Spec.Selector == nil {
		return pods, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
	if err != nil || sel.Empty() {
		return pods, nil // the plan reports a bad selector; nothing is adopted
	}
	var orphans corev1.PodList
	if err := c.cache.List(ctx, &orphans, client.InNamespace(w.Namespace),
		client.MatchingFields{OwnerUIDIndex: NoController}, client.MatchingLabelsSelector{Selector: sel},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range orphans.Items {
		pods = append(pods, &orphans.Items[i])
	}
	return pods, nil
}

// OwnerUID is the index function of OwnerUIDIndex: the UID of the pod's controller,
// or NoController.
func OwnerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return []string{NoController}
}

// IsManagedBy reports whether job is managed by the controller named name: its
// spec.managedBy is name, or it is unset and name is batchv1.JobControllerName.
func IsManagedBy(job *batchv1.Job, name string) bool {
	return job != nil && plan.JobWorkload(job).HandledBy(name, owner.BatchJob)
}

// ManagedBy returns a predicate that admits the Jobs IsManagedBy name. spec.managedBy
// is immutable, so one object of an event decides.
func ManagedBy(name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		job, ok := obj.(*batchv1.Job)
		return ok && IsManagedBy(job, name)
	})
}
