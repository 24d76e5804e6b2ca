package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
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
	api     client.Reader
	name    string
	log     logr.Logger
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
		// Before adopting orphans, read the TrainingJob from the API server, not
		// the cache.
		api := mgr.GetAPIReader()
		cfg.ReadOwner = reconcile.ObjectOwnerReader(func(ctx context.Context, namespace, name string) (*v1alpha1.TrainingJob, error) {
			tj := &v1alpha1.TrainingJob{}
			return tj, api.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, tj)
		})
	}
	rec, err := reconcile.New(cfg, controllerruntime.NewClient(mgr.GetClient(), mgr.GetAPIReader()), StatusWriter{Client: mgr.GetClient()})
	if err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	c := &Controller{
		rec: rec, cache: mgr.GetCache(), api: mgr.GetAPIReader(), name: cfg.Name, log: cfg.Logger,
		orphans: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: ControllerName + "-orphan-pods"}),
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
		// Spec changes, additions and deletions sync at once; status-only changes
		// (this controller's own writes) after the batch period (trainingJobHandler).
		For(&v1alpha1.TrainingJob{}, builder.WithPredicates(managed, predicate.GenerationChangedPredicate{})).
		Watches(&v1alpha1.TrainingJob{}, &trainingJobHandler{c}, builder.WithPredicates(managed)).
		Watches(&corev1.Pod{}, controllerruntime.PodEventHandler(c.handlePod)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(opts.Workers, 5),
			SkipNameValidation:      ptr.To(opts.SkipNameValidation),
		}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	if err := mgr.Add(&controllerruntime.OrphanWorker{Queue: c.orphans, Clean: c.cleanOrphan, Log: c.log}); err != nil {
		return nil, fmt.Errorf("trainingjob: Setup: %w", err)
	}
	return c, nil
}

// Reconciler returns the jobkit Reconciler the controller runs.
func (c *Controller) Reconciler() *reconcile.Reconciler { return c.rec }

// Reconcile syncs one TrainingJob from the cache. One missing from the cache is
// forgotten; one Workload refuses gets a Warning event and no retry (its spec is
// immutable). A sync error is returned for the workqueue to retry with rate
// limiting.
func (c *Controller) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	tj := &v1alpha1.TrainingJob{}
	if err := c.cache.Get(ctx, req.NamespacedName, tj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			c.rec.Forget(reconcile.Key(req.Namespace, req.Name))
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	if !IsManagedBy(tj, c.name) {
		return crreconcile.Result{}, nil // queued by a pod event; another controller's run
	}
	w, err := Workload(tj)
	if err != nil {
		c.rec.Config().Events.Eventf(tj, corev1.EventTypeWarning, ReasonInvalid, "%v", err)
		return crreconcile.Result{}, nil
	}
	res, err := c.rec.Sync(ctx, w, c.listPods(ctx))
	if err != nil {
		return crreconcile.Result{}, err
	}
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}

// listPods lists the pods controlled by w from the cache, without copies (the
// Reconciler never modifies its inputs).
func (c *Controller) listPods(ctx context.Context) reconcile.PodLister {
	return func(w *plan.Workload) ([]*corev1.Pod, error) {
		var list corev1.PodList
		if err := c.cache.List(ctx, &list, client.InNamespace(w.Namespace),
			client.MatchingFields{PodOwnerIndex: string(w.UID)}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		pods := make([]*corev1.Pod, len(list.Items))
		for i := range list.Items {
			pods[i] = &list.Items[i]
		}
		return pods, nil
	}
}

// cachedFacts returns what the cache shows of the TrainingJob namespace/name.
func (c *Controller) cachedFacts(ctx context.Context) reconcile.OwnerLookup {
	return func(namespace, name string) *finalizers.OrphanOwner {
		tj := &v1alpha1.TrainingJob{}
		if err := c.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, tj, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		return OwnerFacts(tj)
	}
}

// cleanOrphan removes the tracking finalizer of the cached pod key when
// Reconciler.CleanOrphan allows it. A TrainingJob missing from the cache (or
// replaced there) is read from the API server before its pod counts as orphaned:
// pods and TrainingJobs come from separate watches.
func (c *Controller) cleanOrphan(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{}
	if err := c.cache.Get(ctx, key, pod, client.UnsafeDisableDeepCopy); err != nil {
		return client.IgnoreNotFound(err)
	}
	var own *finalizers.OrphanOwner
	if ref := Kind.ControllerOf(pod); ref != nil {
		name := types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}
		tj := &v1alpha1.TrainingJob{}
		err := c.cache.Get(ctx, name, tj, client.UnsafeDisableDeepCopy)
		if apierrors.IsNotFound(err) || (err == nil && tj.UID != ref.UID) {
			tj = &v1alpha1.TrainingJob{}
			err = c.api.Get(ctx, name, tj)
		}
		switch {
		case err == nil:
			own = OwnerFacts(tj)
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	_, err := c.rec.CleanOrphan(ctx, pod, own)
	return err
}
