package controllerruntime

import (
	"context"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// queue is the controller's workqueue as event handlers see it.
type queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]

// ownerOf is the part of a controller that is the same for every owner kind: the
// Reconcile body, the owner and pod event handlers and the orphan cleanup, over
// the owner type's conversions.
type ownerOf[T client.Object] struct {
	rec *reconcile.Reconciler
	cfg reconcile.Config // rec's, with the defaults filled in
	// cache reads owners and pods without copies: the Reconciler never modifies
	// its inputs.
	cache client.Reader
	// pods is the store of the manager's pod informer, whose pods the syncs
	// list (Config.ImmutablePods), or nil: they list copies from cache.
	pods    toolscache.Indexer
	client  client.Client // writes the status of roles owners
	scheme  *runtime.Scheme
	typ     reconcile.Type[T]
	invalid string // the reason of the event on an owner Workload refuses
	orphans workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// childManagedBy is Options.ChildManagedBy.
	childManagedBy string
	// inPlace is Options.InPlaceRestart.
	inPlace bool
	// planned is Options.ClaimsAndBudgets.
	planned bool
	onSync  func(obj T, res reconcile.Result, err error)
	log     logr.Logger
}

func (o *ownerOf[T]) kind() owner.Kind { return o.cfg.Owner }

// manages reports whether this controller syncs obj (Type.Handles).
func (o *ownerOf[T]) manages(obj T) bool { return o.typ.Handles(obj, o.cfg.Name, o.kind()) }

// facts returns what the orphan cleanup and the pod-event mapping read of obj
// (Type.OrphanOwner).
func (o *ownerOf[T]) facts(obj T) *finalizers.OrphanOwner { return o.typ.OrphanOwner(obj, o.kind()) }

func (o *ownerOf[T]) reconcileKey(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	obj := o.typ.New()
	if err := o.cache.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			o.rec.Forget(reconcile.Key(req.Namespace, req.Name))
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	if !o.manages(obj) {
		return crreconcile.Result{}, nil
	}
	w, g, in, err := o.typ.Shape(obj)
	if err != nil {
		o.cfg.Events.Eventf(obj, corev1.EventTypeWarning, o.invalid, "%v", err)
		return crreconcile.Result{}, nil
	}
	var res reconcile.Result
	switch {
	case in != nil:
		res, err = o.syncChildJobs(ctx, in)
	case g != nil:
		res, err = o.syncRoles(ctx, g)
	default:
		res, err = o.rec.Sync(ctx, w, func(w *plan.Workload) ([]*corev1.Pod, error) { return o.listPods(ctx, w) })
	}
	if o.onSync != nil {
		o.onSync(obj, res, err)
	}
	if err != nil {
		return crreconcile.Result{}, err
	}
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}

// noUpdates is the predicate of the For watch: additions and deletions sync at once,
// updates are ownerEvents' (after the batch period unless the spec or the UID
// changed).
var noUpdates = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}

// ownerEvents returns the handler of owner updates and deletions: it gives them to
// Reconciler.ObserveOwnerEvent, queues the sync it asks for (a status-only update,
// such as the controller's own write, after the batch period, so that the pod
// events of that sync arrive first) and hands the pods of an owner deleted, replaced
// or just finished to the orphan worker.
func (o *ownerOf[T]) ownerEvents() handler.TypedEventHandler[client.Object, crreconcile.Request] {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			old, ok1 := e.ObjectOld.(T)
			cur, ok2 := e.ObjectNew.(T)
			if !ok1 || !ok2 {
				return
			}
			ow, err1 := o.typ.Owner(old)
			cw, err2 := o.typ.Owner(cur)
			if err1 != nil || err2 != nil {
				// Reconcile records why it cannot be synced.
				q.Add(crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(cur)})
				return
			}
			o.observe(ctx, reconcile.OwnerEvent{Old: ow, New: cw}, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if obj, ok := e.Object.(T); ok {
				if w, err := o.typ.Owner(obj); err == nil {
					o.observe(ctx, reconcile.OwnerEvent{Old: w}, q)
				}
			}
		},
	}
}

func (o *ownerOf[T]) observe(ctx context.Context, ev reconcile.OwnerEvent, q queue) {
	res := o.rec.ObserveOwnerEvent(ev)
	if res.Sync {
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ev.New.Namespace, Name: ev.New.Name}}, res.Delay)
	}
	// A kind of child-Jobs groups only has no pod to clean (nor the pod index).
	if res.OrphanCleanup != nil && !o.typ.ChildJobsOnly() {
		o.queueOrphans(ctx, res.OrphanCleanup)
	}
}

// queueOrphans queues the cached pods controlled by w that carry the tracking
// finalizer for the orphan worker, which decides.
func (o *ownerOf[T]) queueOrphans(ctx context.Context, w *plan.Workload) {
	pods, err := o.listOwned(ctx, w)
	if err != nil {
		o.log.Error(err, "Listing the pods of an owner for the orphan cleanup", "owner", reconcile.Key(w.Namespace, w.Name))
		return
	}
	for _, pod := range pods {
		if o.kind().HasFinalizer(pod) {
			o.orphans.Add(types.NamespacedName{Namespace: w.Namespace, Name: pod.Name})
		}
	}
}

// handlePod gives a pod event to Reconciler.ObservePodEvent, so that the event
// fulfils the expectations it concerns before the owners it names are queued
// (after the batch period), queues the owners that may adopt an orphan, and hands
// pods whose finalizer nobody will remove to the orphan worker. It replaces
// Owns(&corev1.Pod{}), whose handler queues the owner at once on a listener of its
// own, in no order with the expectation observations.
func (o *ownerOf[T]) handlePod(ctx context.Context, ev reconcile.PodEvent, q queue) {
	res := o.rec.ObservePodEvent(ev, o.cached(ctx))
	for _, key := range res.Sync {
		ns, name, _ := strings.Cut(key, "/")
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, res.Delay)
	}
	pod := ev.New
	if pod == nil {
		pod = ev.Old
	}
	if res.Adoptable {
		for _, n := range o.adopters(ctx, pod) {
			q.AddAfter(crreconcile.Request{NamespacedName: n}, res.Delay)
		}
	}
	if res.OrphanCleanup {
		o.orphans.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
}

// cached returns what the cache shows of the owner namespace/name, or nil.
func (o *ownerOf[T]) cached(ctx context.Context) reconcile.OwnerLookup {
	return func(namespace, name string) *finalizers.OrphanOwner {
		obj := o.typ.New()
		if err := o.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		return o.facts(obj)
	}
}

// cleanOrphan removes the tracking finalizer of the cached pod key when
// Reconciler.CleanOrphan decides so, given what the cache shows of its owner; the
// Reconciler confirms an owner missing from the cache (or replaced there) with its
// Config.ReadOwner, since pods and owners come from separate watches. A pod gone
// from the cache needs nothing.
func (o *ownerOf[T]) cleanOrphan(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{}
	if err := o.cache.Get(ctx, key, pod, client.UnsafeDisableDeepCopy); err != nil {
		return client.IgnoreNotFound(err)
	}
	var own *finalizers.OrphanOwner
	if ref := o.kind().ControllerOf(pod); ref != nil {
		own = o.cached(ctx)(pod.Namespace, ref.Name)
	}
	_, err := o.rec.CleanOrphan(ctx, pod, own)
	return err
}
