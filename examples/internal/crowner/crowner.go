package crowner

import (
	"context"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// Queue is the controller's workqueue as event handlers see it.
type Queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]

// Owner is one owner kind T (a pointer type such as *batchv1.Job) served by a
// jobkit Reconciler on controller-runtime. Every field but ListPods, Adopters and
// OnSync is required.
type Owner[T client.Object] struct {
	// Rec is the Reconciler; its Config().Owner is the kind of T.
	Rec *reconcile.Reconciler
	// Cache reads owners and pods: the manager's cache, read without copies (the
	// Reconciler never modifies its inputs).
	Cache client.Reader
	// New returns an empty T to read into.
	New func() T
	// Manages reports whether this controller manages o (its managedBy).
	Manages func(o T) bool
	// Workload converts o onto the workload a sync takes. An error means o cannot
	// be synced: it gets a Warning event with InvalidReason and no retry.
	Workload      func(o T) (*plan.Workload, error)
	InvalidReason string
	// Facts is what the orphan cleanup and the pod-event mapping read of a cached
	// owner (finalizers.JobOwner for a batch/v1 Job).
	Facts func(o T) *finalizers.OrphanOwner
	// ListPods lists the pods of w from the cache; nil means ListOwned (the pods
	// controlled by w, none adopted).
	ListPods func(ctx context.Context, w *plan.Workload) ([]*corev1.Pod, error)
	// PodIndex is the field index of pods by the UID of their controller.
	PodIndex string
	// Orphans is the queue of the orphan worker, whose Clean is CleanOrphan.
	Orphans workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// Adopters, when set, returns the owners that may adopt the orphan pod (their
	// selector matches it), to sync after the batch period.
	Adopters func(ctx context.Context, pod *corev1.Pod) []types.NamespacedName
	// OnSync, when set, is called after each sync with what it returned.
	OnSync func(o T, res reconcile.Result, err error)
	// Log receives the failures of the event handlers.
	Log logr.Logger
}

// Reconcile syncs one owner from the cache. An owner missing from the cache is
// forgotten (its expectations and backoff record dropped; only this worker syncs
// the key, so no sync of an owner recreated under the name loses them); its pods'
// finalizers are the orphan worker's. One that this controller does not manage (a
// pod event queued it) is left alone. A sync error is returned, so the workqueue
// retries with rate limiting; RequeueAfter is the sync's, the only control a
// Result carries.
func (o *Owner[T]) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	obj := o.New()
	if err := o.Cache.Get(ctx, req.NamespacedName, obj, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			o.Rec.Forget(reconcile.Key(req.Namespace, req.Name))
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	if !o.Manages(obj) {
		return crreconcile.Result{}, nil
	}
	w, err := o.Workload(obj)
	if err != nil {
		o.Rec.Config().Events.Eventf(obj, corev1.EventTypeWarning, o.InvalidReason, "%v", err)
		return crreconcile.Result{}, nil
	}
	list := o.ListPods
	if list == nil {
		list = func(ctx context.Context, w *plan.Workload) ([]*corev1.Pod, error) {
			return ListOwned(ctx, o.Cache, o.PodIndex, w)
		}
	}
	res, err := o.Rec.Sync(ctx, w, func(w *plan.Workload) ([]*corev1.Pod, error) { return list(ctx, w) })
	if o.OnSync != nil {
		o.OnSync(obj, res, err)
	}
	if err != nil {
		return crreconcile.Result{}, err
	}
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}

// NoUpdates is the predicate of the For watch: additions and deletions sync at once,
// updates are OwnerEvents' (after the batch period unless the spec or the UID
// changed).
var NoUpdates = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}

// OwnerEvents returns the handler of owner updates and deletions: it gives them to
// Reconciler.ObserveOwnerEvent, queues the sync it asks for (a status-only update,
// such as the controller's own write, after the batch period, so that the pod
// events of that sync arrive first) and hands the pods of an owner deleted, replaced
// or just finished to the orphan worker. Watch T with it, filtered by Manages.
func (o *Owner[T]) OwnerEvents() handler.TypedEventHandler[client.Object, crreconcile.Request] {
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q Queue) {
			old, ok1 := e.ObjectOld.(T)
			cur, ok2 := e.ObjectNew.(T)
			if !ok1 || !ok2 {
				return
			}
			ow, err1 := o.Workload(old)
			cw, err2 := o.Workload(cur)
			if err1 != nil || err2 != nil {
				// Reconcile records why it cannot be synced.
				q.Add(crreconcile.Request{NamespacedName: client.ObjectKeyFromObject(cur)})
				return
			}
			o.observe(ctx, reconcile.OwnerEvent{Old: ow, New: cw}, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q Queue) {
			if obj, ok := e.Object.(T); ok {
				if w, err := o.Workload(obj); err == nil {
					o.observe(ctx, reconcile.OwnerEvent{Old: w}, q)
				}
			}
		},
	}
}

func (o *Owner[T]) observe(ctx context.Context, ev reconcile.OwnerEvent, q Queue) {
	res := o.Rec.ObserveOwnerEvent(ev)
	if res.Sync {
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ev.New.Namespace, Name: ev.New.Name}}, res.Delay)
	}
	if res.OrphanCleanup != nil {
		o.queueOrphans(ctx, res.OrphanCleanup)
	}
}

// queueOrphans queues the cached pods controlled by w that carry the tracking
// finalizer for the orphan worker, which decides.
func (o *Owner[T]) queueOrphans(ctx context.Context, w *plan.Workload) {
	kind := o.Rec.Config().Owner
	var pods corev1.PodList
	if err := o.Cache.List(ctx, &pods, client.InNamespace(w.Namespace),
		client.MatchingFields{o.PodIndex: string(w.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		o.Log.Error(err, "Listing the pods of an owner for the orphan cleanup", "owner", reconcile.Key(w.Namespace, w.Name))
		return
	}
	for i := range pods.Items {
		if kind.HasFinalizer(&pods.Items[i]) {
			o.Orphans.Add(types.NamespacedName{Namespace: w.Namespace, Name: pods.Items[i].Name})
		}
	}
}

// HandlePod gives a pod event to Reconciler.ObservePodEvent, so that the event
// fulfils the expectations it concerns before the owners it names are queued
// (after the batch period), queues the owners that may adopt an orphan (Adopters),
// and hands pods whose finalizer nobody will remove to the orphan worker. Watch
// pods with it instead of Owns(&corev1.Pod{}), whose handler queues the owner at
// once on a listener of its own, in no order with the expectation observations.
func (o *Owner[T]) HandlePod(ctx context.Context, ev reconcile.PodEvent, q Queue) {
	res := o.Rec.ObservePodEvent(ev, o.cached(ctx))
	for _, key := range res.Sync {
		ns, name, _ := strings.Cut(key, "/")
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, res.Delay)
	}
	pod := ev.New
	if pod == nil {
		pod = ev.Old
	}
	if res.Adoptable && o.Adopters != nil {
		for _, n := range o.Adopters(ctx, pod) {
			q.AddAfter(crreconcile.Request{NamespacedName: n}, res.Delay)
		}
	}
	if res.OrphanCleanup {
		o.Orphans.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
}

// cached returns what the cache shows of the owner namespace/name, or nil.
func (o *Owner[T]) cached(ctx context.Context) reconcile.OwnerLookup {
	return func(namespace, name string) *finalizers.OrphanOwner {
		obj := o.New()
		if err := o.Cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj, client.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		return o.Facts(obj)
	}
}

// CleanOrphan removes the tracking finalizer of the cached pod key when
// Reconciler.CleanOrphan decides so, given what the cache shows of its owner; the
// Reconciler confirms an owner missing from the cache (or replaced there) with its
// Config.ReadOwner, since pods and owners come from separate watches. A pod gone
// from the cache needs nothing.
func (o *Owner[T]) CleanOrphan(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{}
	if err := o.Cache.Get(ctx, key, pod, client.UnsafeDisableDeepCopy); err != nil {
		return client.IgnoreNotFound(err)
	}
	var own *finalizers.OrphanOwner
	if ref := o.Rec.Config().Owner.ControllerOf(pod); ref != nil {
		own = o.cached(ctx)(pod.Namespace, ref.Name)
	}
	_, err := o.Rec.CleanOrphan(ctx, pod, own)
	return err
}

// ListOwned lists from cache, without copies, the pods whose controller is w: those
// whose field index (the UID of their controller) is w's UID.
func ListOwned(ctx context.Context, cache client.Reader, index string, w *plan.Workload) ([]*corev1.Pod, error) {
	var list corev1.PodList
	if err := cache.List(ctx, &list, client.InNamespace(w.Namespace),
		client.MatchingFields{index: string(w.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}
