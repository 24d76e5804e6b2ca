package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
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

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/crowner"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	// ControllerName names the controller in controller-runtime's logs and
	// metrics.
	ControllerName = "trainingjob"
	// PodOwnerIndex is the field index of pods by the UID of their controller.
	PodOwnerIndex = "ml.examples.jobkit.dev/controller-uid"
	// ReasonInvalid is the reason of the Warning event recorded on a TrainingJob
	// that Workload refuses.
	ReasonInvalid = "InvalidTrainingJob"
)

// Options configure Setup besides the reconcile.Config.
type Options struct {
	// Workers is how many TrainingJobs are synced at once; zero means 5.
	Workers int
	// SkipNameValidation lets several managers in one process register the
	// controller (tests that restart it).
	SkipNameValidation bool
}

// Controller syncs the TrainingJobs it manages (IsManagedBy its name) with a
// reconcile.Reconciler. It implements controller-runtime's reconcile.Reconciler.
type Controller struct {
	rec     *reconcile.Reconciler
	cache   client.Reader
	name    string
	log     logr.Logger
	owner   *crowner.Owner[*v1alpha1.TrainingJob]
	orphans workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// Setup builds the controller and registers it with mgr, whose scheme must hold
// v1alpha1: the pod index PodOwnerIndex, the controller (TrainingJobs it manages,
// and pod events observed by the Reconciler before their owner is queued) and a
// worker that removes the tracking finalizer of pods whose TrainingJob is gone or
// finished.
//
// cfg.Owner is set to Kind. Zero fields of cfg take defaults: Name
// DefaultManagedBy, Logger the manager's, Events an events.k8s.io/v1 recorder.
// cfg.Backoff plays no part: each TrainingJob has its own (spec.backoff).
func Setup(mgr manager.Manager, cfg reconcile.Config, opts Options) (*Controller, error) {
	if mgr == nil {
		return nil, errors.New("trainingjob: Setup: manager is nil")
	}
	cfg.Owner = Kind
	cfg.Name = cmp.Or(cfg.Name, DefaultManagedBy)
	if cfg.Logger.GetSink() == nil {
		cfg.Logger = mgr.GetLogger().WithName(ControllerName)
	}
	if cfg.Events == nil {
		rec, err := controllerruntime.ManagerEventRecorder(mgr, cfg.Name)
		if err != nil {
			return nil, fmt.Errorf("trainingjob: Setup: %w", err)
		}
		cfg.Events = controllerruntime.NewEventRecorder(rec)
	}
	if cfg.ReadOwner == nil {
		// Before adopting orphans, and before freeing the pods of a TrainingJob
		// missing from the cache, read it from the API server, not the cache.
		api := mgr.GetAPIReader()
		cfg.ReadOwner = reconcile.ObjectOwnerReader(func(ctx context.Context, namespace, name string) (*v1alpha1.TrainingJob, error) {
			tj := &v1alpha1.TrainingJob{}
			return tj, api.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, tj)
		}, Workload)
	}
	rec, err := reconcile.New(cfg, controllerruntime.NewClient(mgr.GetClient(), mgr.GetAPIReader()), StatusWriter{Client: mgr.GetClient()})
	if err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	c := &Controller{
		rec: rec, cache: mgr.GetCache(), name: cfg.Name, log: cfg.Logger,
		orphans: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: ControllerName + "-orphan-pods"}),
	}
	c.owner = &crowner.Owner[*v1alpha1.TrainingJob]{
		Rec:           rec,
		Cache:         c.cache,
		New:           func() *v1alpha1.TrainingJob { return &v1alpha1.TrainingJob{} },
		Manages:       func(tj *v1alpha1.TrainingJob) bool { return IsManagedBy(tj, c.name) },
		Workload:      Workload,
		InvalidReason: ReasonInvalid,
		Facts:         OwnerFacts,
		PodIndex:      PodOwnerIndex,
		Orphans:       c.orphans,
		Log:           c.log,
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, PodOwnerIndex, controllerruntime.OwnerUID); err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: index pods: %w", err)
	}
	managed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		tj, ok := o.(*v1alpha1.TrainingJob)
		return ok && IsManagedBy(tj, c.name)
	})
	err = builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		// Additions and deletions sync at once; updates go through
		// Reconciler.ObserveOwnerEvent, which delays status-only ones (this
		// controller's own writes among them) by the batch period.
		For(&v1alpha1.TrainingJob{}, builder.WithPredicates(managed, crowner.NoUpdates)).
		Watches(&v1alpha1.TrainingJob{}, c.owner.OwnerEvents(), builder.WithPredicates(managed)).
		Watches(&corev1.Pod{}, controllerruntime.PodEventHandler(c.owner.HandlePod)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(opts.Workers, 5),
			SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	if err := mgr.Add(&controllerruntime.OrphanWorker{Queue: c.orphans, Clean: c.owner.CleanOrphan, Log: c.log}); err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	return c, nil
}

// Reconciler returns the jobkit Reconciler the controller runs.
func (c *Controller) Reconciler() *reconcile.Reconciler { return c.rec }

// Reconcile syncs one TrainingJob from the cache (crowner.Owner.Reconcile). One
// missing from the cache is forgotten; one Workload refuses gets a Warning event
// and no retry (its spec is immutable). A sync error is returned for the workqueue
// to retry with rate limiting.
func (c *Controller) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	return c.owner.Reconcile(ctx, req)
}
