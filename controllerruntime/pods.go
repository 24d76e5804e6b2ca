package controllerruntime

import (
	"context"
	"reflect"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	// OwnerUIDIndex is the field index of pods (and, for a Type with the
	// child-Jobs shape, of batch/v1 Jobs) by the UID of their controller, of any
	// kind, that Setup registers once per manager and type; objects without a
	// controller are indexed under "<none>" (the candidates for adoption). A
	// test over a fake client registers it with OwnerUID.
	OwnerUIDIndex = "jobkit.dev/controller-uid"
	noController  = "<none>"
)

// OwnerUID is the index function of OwnerUIDIndex.
func OwnerUID(obj client.Object) []string {
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return []string{string(ref.UID)}
	}
	return []string{noController}
}

// indexed holds the field indexers and types OwnerUIDIndex is registered with:
// one index of each type serves every controller of a manager.
var indexed sync.Map

type indexedKey struct {
	fi  any
	typ reflect.Type
}

// indexOnce registers OwnerUIDIndex on objects of obj's type with mgr, once.
func indexOnce(mgr manager.Manager, obj client.Object) error {
	fi := mgr.GetFieldIndexer()
	comparable := fi != nil && reflect.TypeOf(fi).Comparable()
	key := indexedKey{fi: fi, typ: reflect.TypeOf(obj)}
	if comparable {
		if _, done := indexed.Load(key); done {
			return nil
		}
	}
	if err := fi.IndexField(context.Background(), obj, OwnerUIDIndex, OwnerUID); err != nil {
		return err
	}
	if comparable {
		indexed.Store(key, true)
	}
	return nil
}

// podsByOwnerIndex is the index of a pod informer's store that Setup adds: the
// pods by namespace and controller UID ("<none>" for the orphans), so that a
// sync lists an owner's pods as the informer's own objects.
const podsByOwnerIndex = "jobkit.dev/namespace-controller-uid"

func podsByOwner(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	return []string{podsByOwnerKey(pod.Namespace, OwnerUID(pod)[0])}, nil
}

func podsByOwnerKey(namespace, uid string) string { return namespace + "/" + uid }

// podIndexMu serializes the check and addition of podsByOwnerIndex: two Setups of
// one manager share its pod informer.
var podIndexMu sync.Mutex

// podIndexer returns the store of the pod informer of c, with podsByOwnerIndex
// added once, or nil when c's pod informer does not expose the store it indexes
// (a cache over several namespaces, a fake, a cache of one's own; listOwned then
// lists copies) or pods is false (a kind that owns no pods).
func podIndexer(ctx context.Context, c cache.Informers, pods bool) (toolscache.Indexer, error) {
	if !pods {
		return nil, nil
	}
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	src, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, nil
	}
	podIndexMu.Lock()
	defer podIndexMu.Unlock()
	if !hasPodsByOwner(src.GetIndexer()) {
		if err := inf.AddIndexers(toolscache.Indexers{podsByOwnerIndex: podsByOwner}); err != nil {
			return nil, err
		}
	}
	// A store that does not show the index added is not the informer's (a fake).
	if idx := src.GetIndexer(); hasPodsByOwner(idx) {
		return idx, nil
	}
	return nil, nil
}

func hasPodsByOwner(idx toolscache.Indexer) bool {
	if idx == nil {
		return false
	}
	_, ok := idx.GetIndexers()[podsByOwnerIndex]
	return ok
}

// byOwner returns the pods of idx in namespace whose controller has uid, as idx
// stores them.
func byOwner(idx toolscache.Indexer, namespace, uid string) ([]*corev1.Pod, error) {
	objs, err := idx.ByIndex(podsByOwnerIndex, podsByOwnerKey(namespace, uid))
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// listOwned lists the pods whose controller is w: the informer's own objects
// when o has its store (Config.ImmutablePods is then set), and otherwise from the
// cache without deep copies (each pod a struct copy of the cached one).
func (o *ownerOf[T]) listOwned(ctx context.Context, w *plan.Workload) ([]*corev1.Pod, error) {
	if o.pods != nil {
		return byOwner(o.pods, w.Namespace, string(w.UID))
	}
	var list corev1.PodList
	if err := o.cache.List(ctx, &list, client.InNamespace(w.Namespace),
		client.MatchingFields{OwnerUIDIndex: string(w.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

// listPods lists the pods controlled by w and, when w has a selector, the pods
// without controller in its namespace that it matches: the ones it may adopt.
func (o *ownerOf[T]) listPods(ctx context.Context, w *plan.Workload) ([]*corev1.Pod, error) {
	pods, err := o.listOwned(ctx, w)
	if err != nil || w.Spec.Selector == nil {
		return pods, err
	}
	sel, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
	if err != nil || sel.Empty() {
		return pods, nil // the plan reports a bad selector; nothing is adopted
	}
	if o.pods != nil {
		orphans, err := byOwner(o.pods, w.Namespace, noController)
		if err != nil {
			return nil, err
		}
		for _, pod := range orphans {
			if sel.Matches(labels.Set(pod.Labels)) {
				pods = append(pods, pod)
			}
		}
		return pods, nil
	}
	var orphans corev1.PodList
	if err := o.cache.List(ctx, &orphans, client.InNamespace(w.Namespace),
		client.MatchingFields{OwnerUIDIndex: noController}, client.MatchingLabelsSelector{Selector: sel},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range orphans.Items {
		pods = append(pods, &orphans.Items[i])
	}
	return pods, nil
}

// adopters returns the owners of this controller in pod's namespace, not being
// deleted, whose selector (valid and not empty) matches the orphan pod. Cost: one
// cache list of the namespace's owners.
func (o *ownerOf[T]) adopters(ctx context.Context, pod *corev1.Pod) []types.NamespacedName {
	gvk := o.kind().GroupVersionKind()
	obj, err := o.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	list, ok := obj.(client.ObjectList)
	if err != nil || !ok {
		o.log.Error(err, "No list type of the owner kind in the manager's scheme", "kind", gvk.String())
		return nil
	}
	if err := o.cache.List(ctx, list, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		o.log.Error(err, "Listing the owners that may adopt a pod", "pod", pod.Namespace+"/"+pod.Name)
		return nil
	}
	var out []types.NamespacedName
	set := labels.Set(pod.Labels)
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		t, ok := item.(T)
		if !ok || !o.manages(t) {
			return nil
		}
		w, err := o.typ.Owner(t)
		if err != nil || w.Deleting || w.Spec.Selector == nil {
			return nil
		}
		if sel, err := metav1.LabelSelectorAsSelector(w.Spec.Selector); err == nil && !sel.Empty() && sel.Matches(set) {
			out = append(out, types.NamespacedName{Namespace: w.Namespace, Name: w.Name})
		}
		return nil
	})
	return out
}

// podEventHandler adapts a function of reconcile.PodEvent to controller-runtime's
// event handler of pods: adds, updates and deletes, the delete with the last state
// known (controller-runtime unwraps the tombstone of a missed deletion). Generic
// events and objects that are not pods are ignored.
type podEventHandler func(ctx context.Context, ev reconcile.PodEvent, q queue)

var _ handler.TypedEventHandler[client.Object, crreconcile.Request] = podEventHandler(nil)

func (f podEventHandler) Create(ctx context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	if pod, ok := e.Object.(*corev1.Pod); ok {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodAdded, New: pod}, q)
	}
}

func (f podEventHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	old, ok1 := e.ObjectOld.(*corev1.Pod)
	cur, ok2 := e.ObjectNew.(*corev1.Pod)
	if ok1 && ok2 {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: cur}, q)
	}
}

func (f podEventHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	if pod, ok := e.Object.(*corev1.Pod); ok {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodDeleted, Old: pod}, q)
	}
}

func (f podEventHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], queue) {}

// orphanWorker removes the tracking finalizer of the pods queued, calling clean for
// each on workers goroutines (zero means 1) and retrying a failure with the queue's
// rate limiting. It is a manager.Runnable that runs only on the leader.
type orphanWorker struct {
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	clean   func(ctx context.Context, pod types.NamespacedName) error
	log     logr.Logger
	workers int
}

// NeedLeaderElection is true: only the leader writes.
func (o *orphanWorker) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends, then shuts the queue down. The manager
// starts it once its caches have synced.
func (o *orphanWorker) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		o.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range max(o.workers, 1) {
		wg.Go(func() {
			for o.next(ctx) {
			}
		})
	}
	wg.Wait()
	return nil
}

func (o *orphanWorker) next(ctx context.Context) bool {
	key, shutdown := o.queue.Get()
	if shutdown {
		return false
	}
	defer o.queue.Done(key)
	if err := o.clean(ctx, key); err != nil {
		if ctx.Err() == nil {
			o.log.Error(err, "Orphan pod cleanup failed; retrying", "pod", key.String())
			o.queue.AddRateLimited(key)
		}
		return true
	}
	o.queue.Forget(key)
	return true
}
