package reconciletest

// A Store as its Cluster, the Cluster's Cache and a Driver see it, whatever
// its T: ownerSource; and the Cache's view of the Store's owners.

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// object is an owner as a Store holds it.
type object = interface {
	metav1.Object
	runtime.Object
}

// ownerSource is a Store of any T: what the Cluster (CollectGarbage, Reset),
// the Cache (events) and a Driver (sync, done, facts) ask of it.
type ownerSource interface {
	// The status subresource of a Job-shaped owner (Cluster.WriteStatus).
	reconcile.StatusWriter
	ownerKind() owner.Kind
	// liveUIDLocked is the UID of the stored owner namespace/name, "" for none.
	liveUIDLocked(namespace, name string) types.UID
	// sortedLocked returns the stored owners by namespace and name (shared).
	sortedLocked() []object
	// ownerEvent converts a delivered change (old nil for an addition, cur nil
	// for a deletion) as production presents it (reconcile.Type.Owner).
	ownerEvent(old, cur object) reconcile.OwnerEvent
	handlersLocked() []func(reconcile.OwnerEvent)
	onEventLocked(h func(reconcile.OwnerEvent))
	// cachedFacts and liveFacts are the orphan facts of the owner
	// namespace/name as the Cache, or the Store, has it; nil when it has none.
	cachedFacts(namespace, name string) *finalizers.OrphanOwner
	liveFacts(namespace, name string) *finalizers.OrphanOwner
	// workload is the stored owner as reconcile.Type.Owner presents it.
	workload(namespace, name string) *plan.Workload
	// sync syncs the owner namespace/name in its shape, as the Cache shows it
	// (cached) or as stored.
	sync(ctx context.Context, r *reconcile.Reconciler, namespace, name string, cached bool) (bool, reconcile.Result, error)
	// done is DoneFunc's test.
	done(namespace, name string) (done, exists bool)
}

var _ ownerSource = (*Store[*Task])(nil)

func (s *Store[T]) ownerKind() owner.Kind { return s.kind }

func (s *Store[T]) liveUIDLocked(namespace, name string) types.UID {
	if o, ok := s.objs[key(namespace, name)]; ok {
		return o.GetUID()
	}
	return ""
}

func (s *Store[T]) sortedLocked() []object {
	objs := sortedValues(s.objs)
	out := make([]object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out
}

func (s *Store[T]) handlersLocked() []func(reconcile.OwnerEvent) { return s.handlers }

func (s *Store[T]) ownerEvent(old, cur object) reconcile.OwnerEvent {
	var ev reconcile.OwnerEvent
	if old != nil {
		ev.Old = s.present(old.(T))
	}
	if cur != nil {
		ev.New = s.present(cur.(T))
	}
	return ev
}

// present is obj as production's readers see it (reconcile.Type.Owner); an
// owner the conversions refuse is presented with its identity and managedBy,
// unfinished, as reconcile.Type.OrphanOwner reads it.
func (s *Store[T]) present(obj T) *plan.Workload {
	w, err := s.typ.Owner(obj)
	if err != nil {
		w = &plan.Workload{Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
			Generation: obj.GetGeneration(), ResourceVersion: obj.GetResourceVersion(), Object: obj}
		if s.typ.ManagedBy != nil {
			w.Spec.ManagedBy = s.typ.ManagedBy(obj)
		}
	}
	return w
}

// OnEvent registers a handler for the delivered watch events of the Store's
// owners, each presented as production's readers see it
// (reconcile.Type.Owner; Object is the T as cached): an addition has no Old, a
// deletion no New (Old is then the last state known). A Driver registers its
// Reconciler's ObserveOwnerEvent on its owners' Store.
func (s *Store[T]) OnEvent(h func(reconcile.OwnerEvent)) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.onEventLocked(h)
}

func (s *Store[T]) onEventLocked(h func(reconcile.OwnerEvent)) { s.handlers = append(s.handlers, h) }

// Cached returns the owner namespace/name as the Cluster's Cache has it (the
// zero T, nil, when it has none). It is a shared snapshot: do not modify it.
func (s *Store[T]) Cached(namespace, name string) T {
	o, _ := s.cached(namespace, name)
	return o
}

func (s *Store[T]) cached(namespace, name string) (T, bool) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	o, ok := s.c.cache.owners[s][key(namespace, name)].(T)
	return o, ok
}

// CachedList returns the Store's owners in the Cluster's Cache, sorted by
// namespace and name (shared snapshots).
func (s *Store[T]) CachedList() []T {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	out := make([]T, 0, len(s.c.cache.owners[s]))
	for _, o := range s.c.cache.owners[s] {
		out = append(out, o.(T))
	}
	sortByName(out)
	return out
}

// CachedOwner returns the orphan facts of the cached owner namespace/name as
// production reads them (reconcile.Type.OrphanOwner), or nil: it is the
// reconcile.OwnerLookup of Reconciler.ObservePodEvent and CleanOrphan.
func (s *Store[T]) CachedOwner(namespace, name string) *finalizers.OrphanOwner {
	return s.cachedFacts(namespace, name)
}

func (s *Store[T]) cachedFacts(namespace, name string) *finalizers.OrphanOwner {
	o, ok := s.cached(namespace, name)
	if !ok {
		return nil
	}
	return s.typ.OrphanOwner(o, s.kind)
}

func (s *Store[T]) liveFacts(namespace, name string) *finalizers.OrphanOwner {
	o, err := s.Get(namespace, name)
	if err != nil {
		return nil
	}
	return s.typ.OrphanOwner(o, s.kind)
}

func (s *Store[T]) workload(namespace, name string) *plan.Workload {
	o, err := s.Get(namespace, name)
	if err != nil {
		return nil
	}
	return s.present(o)
}
