package reconciletest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/reconcile"
)

// WatchEvent is a change to one stored object, as a watch would report it. Exactly
// one of Pod and Owner is set; it is the object after the change (its last state
// for Deleted). Owner is an owner of any Store: a *batchv1.Job (Cluster.Jobs), or
// a T of the Store of the cluster's Options.Owner (NewStore). The objects are
// shared, never modified: do not modify them.
type WatchEvent struct {
	Type  watch.EventType
	Pod   *corev1.Pod
	Owner interface {
		metav1.Object
		runtime.Object
	}
	// Time is when the change was written; DueAt when it may be delivered by
	// DeliverDue (Time plus the event latency at that moment).
	Time  time.Time
	DueAt time.Time

	seq uint64      // queue order, to find an event again
	src ownerSource // the Store of Owner
}

// String renders the event on one line.
func (e WatchEvent) String() string {
	if e.Pod != nil {
		return fmt.Sprintf("%s pod %s/%s rv=%s", e.Type, e.Pod.Namespace, e.Pod.Name, e.Pod.ResourceVersion)
	}
	if e.Owner != nil {
		kind := "owner"
		if e.src != nil {
			kind = strings.ToLower(e.src.ownerKind().Kind)
		}
		return fmt.Sprintf("%s %s %s/%s rv=%s", e.Type, kind, e.Owner.GetNamespace(), e.Owner.GetName(), e.Owner.GetResourceVersion())
	}
	return string(e.Type)
}

// objectKey identifies the object of an event, to keep per-object order: a pod
// (src nil) or an owner of the Store src.
type objectKey struct {
	src  ownerSource
	name types.NamespacedName
}

func (e WatchEvent) object() objectKey {
	if e.Pod != nil {
		return objectKey{name: key(e.Pod.Namespace, e.Pod.Name)}
	}
	return objectKey{src: e.src, name: key(e.Owner.GetNamespace(), e.Owner.GetName())}
}

// Cache is the informer-like view of a Cluster: the state made of the watch events
// delivered so far. Events wait in a queue until the test delivers them (DeliverAll,
// DeliverN, DeliverDue, DeliverAt) or drops them (DropAt: the cache takes the change
// but no handler hears of it, as when a watch misses an event and a relist finds the
// new state). Events of one object are always applied in order; events of different
// objects may be delivered in any order the test picks.
//
// Handlers run synchronously on the goroutine that delivers, outside the Cluster's
// lock, so they may call the Cluster (and a Reconciler). Objects returned by the
// Cache are shared snapshots, as from an informer: do not modify them.
type Cache struct {
	c *Cluster // its mu guards the fields below

	// owners holds the cached owners of each Store.
	owners map[ownerSource]map[types.NamespacedName]object
	pods   map[types.NamespacedName]*corev1.Pod
	// byOwner indexes pods by their controller reference's UID (orphans under
	// ""), so that an owner's list costs its own pods, not the cluster's.
	byOwner map[types.UID]map[types.NamespacedName]*corev1.Pod
	pending []WatchEvent
	seq     uint64
	// duringList is what the next pod list delivers once it has its snapshot
	// (DeliverDuringList): that many events, every one when negative, none at 0.
	duringList int

	podHandlers []func(reconcile.PodEvent)
}

func newCache(c *Cluster) *Cache {
	ca := &Cache{c: c}
	ca.clearLocked()
	return ca
}

// clearLocked empties the cache's objects.
func (ca *Cache) clearLocked() {
	ca.owners = map[ownerSource]map[types.NamespacedName]object{}
	ca.pods = map[types.NamespacedName]*corev1.Pod{}
	ca.byOwner = map[types.UID]map[types.NamespacedName]*corev1.Pod{}
}

// controllerUID is the UID of p's controller reference, "" for an orphan.
func controllerUID(p *corev1.Pod) types.UID {
	if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
		return ref.UID
	}
	return ""
}

// setPodLocked stores p under k (nil deletes), keeping byOwner in step.
func (ca *Cache) setPodLocked(k types.NamespacedName, p *corev1.Pod) {
	if old := ca.pods[k]; old != nil {
		uid := controllerUID(old)
		delete(ca.byOwner[uid], k)
		if len(ca.byOwner[uid]) == 0 {
			delete(ca.byOwner, uid)
		}
		delete(ca.pods, k)
	}
	if p == nil {
		return
	}
	ca.pods[k] = p
	uid := controllerUID(p)
	m := ca.byOwner[uid]
	if m == nil {
		m = map[types.NamespacedName]*corev1.Pod{}
		ca.byOwner[uid] = m
	}
	m[k] = p
}

func (ca *Cache) queueLocked(ev WatchEvent) {
	ca.seq++
	ev.seq = ca.seq
	ca.pending = append(ca.pending, ev)
}

// OnPodEvent registers a handler for delivered pod events.
func (ca *Cache) OnPodEvent(h func(reconcile.PodEvent)) {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	ca.podHandlers = append(ca.podHandlers, h)
}

// Pending returns the queued events, oldest first.
func (ca *Cache) Pending() []WatchEvent {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	return slices.Clone(ca.pending)
}

// DeliverAll delivers every queued event and returns how many it delivered,
// including those queued by the handlers meanwhile.
func (ca *Cache) DeliverAll() int {
	n := 0
	for ca.deliver(0, true) {
		n++
	}
	return n
}

// DeliverN delivers up to n queued events, oldest first, and returns how many.
func (ca *Cache) DeliverN(n int) int {
	d := 0
	for d < n && ca.deliver(0, true) {
		d++
	}
	return d
}

// DeliverDue delivers, oldest first, the queued events due by the cluster clock's
// now; an event not yet due holds back the later events of the same object. It
// returns how many it delivered.
func (ca *Cache) DeliverDue() int {
	n := 0
	for {
		i := ca.firstDue()
		if i < 0 || !ca.deliver(i, true) {
			return n
		}
		n++
	}
}

// NextDue returns when the earliest queued event becomes due, and false when no
// event is queued.
func (ca *Cache) NextDue() (time.Time, bool) {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	var next time.Time
	for i, ev := range ca.pending {
		if i == 0 || ev.DueAt.Before(next) {
			next = ev.DueAt
		}
	}
	return next, len(ca.pending) > 0
}

func (ca *Cache) firstDue() int {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	now := ca.c.clock.Now()
	held := map[objectKey]bool{}
	for i, ev := range ca.pending {
		k := ev.object()
		if held[k] {
			continue
		}
		if ev.DueAt.After(now) {
			held[k] = true
			continue
		}
		return i
	}
	return -1
}

// DeliverAt delivers the queued event at index i (in Pending), after the events of
// the same object queued before it. It returns an error when i is out of range.
func (ca *Cache) DeliverAt(i int) error { return ca.apply(i, true) }

// DropAt applies the queued event at index i (after the earlier events of the same
// object, also silently) to the cache without calling any handler: the change is
// in the next list, but no handler hears of it, as when a watch loses a delete event
// and a relist finds the object gone.
func (ca *Cache) DropAt(i int) error { return ca.apply(i, false) }

func (ca *Cache) apply(i int, notify bool) error {
	ca.c.mu.Lock()
	if i < 0 || i >= len(ca.pending) {
		n := len(ca.pending)
		ca.c.mu.Unlock()
		return fmt.Errorf("reconciletest: event index %d out of range [0,%d)", i, n)
	}
	target := ca.pending[i]
	ca.c.mu.Unlock()
	for {
		ca.c.mu.Lock()
		first := slices.IndexFunc(ca.pending, func(ev WatchEvent) bool { return ev.object() == target.object() })
		done := first < 0 || ca.pending[first].seq == target.seq
		ca.c.mu.Unlock()
		if first < 0 {
			return nil // a handler delivered it meanwhile
		}
		ca.deliver(first, notify)
		if done {
			return nil
		}
	}
}

// deliver applies pending[i] to the cache and, when notify, calls the handlers.
func (ca *Cache) deliver(i int, notify bool) bool {
	ca.c.mu.Lock()
	if i >= len(ca.pending) {
		ca.c.mu.Unlock()
		return false
	}
	ev := ca.pending[i]
	if i == 0 {
		ca.pending[0] = WatchEvent{} // drop the references
		ca.pending = ca.pending[1:]
	} else {
		ca.pending = slices.Delete(ca.pending, i, i+1)
	}
	var podEv *reconcile.PodEvent
	var ownerOld, ownerCur object
	var ownerHandlers []func(reconcile.OwnerEvent)
	if ev.Pod != nil {
		k := key(ev.Pod.Namespace, ev.Pod.Name)
		old := ca.pods[k]
		switch ev.Type {
		case watch.Deleted:
			ca.setPodLocked(k, nil)
			podEv = &reconcile.PodEvent{Type: reconcile.PodDeleted, Old: ev.Pod}
		default:
			ca.setPodLocked(k, ev.Pod)
			if old == nil {
				podEv = &reconcile.PodEvent{Type: reconcile.PodAdded, New: ev.Pod}
			} else {
				podEv = &reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: ev.Pod}
			}
		}
	} else {
		objs := ca.owners[ev.src]
		if objs == nil {
			objs = map[types.NamespacedName]object{}
			ca.owners[ev.src] = objs
		}
		k := key(ev.Owner.GetNamespace(), ev.Owner.GetName())
		old := objs[k]
		var cur object
		if ev.Type == watch.Deleted {
			delete(objs, k)
			old = ev.Owner
		} else {
			objs[k] = ev.Owner
			cur = ev.Owner
		}
		ownerOld, ownerCur, ownerHandlers = old, cur, ev.src.handlersLocked()
	}
	podHandlers := ca.podHandlers
	ca.c.mu.Unlock()
	if !notify {
		return true
	}
	if podEv != nil {
		for _, h := range podHandlers {
			h(*podEv)
		}
	}
	if len(ownerHandlers) > 0 {
		// Converted outside the lock: the Type's functions are the test's.
		oe := ev.src.ownerEvent(ownerOld, ownerCur)
		for _, h := range ownerHandlers {
			h(oe)
		}
	}
	return true
}

// Reset models a new informer, as after a controller restart: the cache is emptied,
// the queued events are dropped, and an Added event for every stored object (Jobs
// first, then the owners of the cluster's Options.Owner, then pods in creation
// order) is queued, due now.
func (ca *Cache) Reset() {
	c := ca.c
	c.mu.Lock()
	defer c.mu.Unlock()
	ca.clearLocked()
	ca.pending = nil
	ca.duringList = 0
	now := c.clock.Now()
	for _, src := range c.stores() {
		for _, o := range src.sortedLocked() {
			ca.queueLocked(WatchEvent{Type: watch.Added, Owner: o, src: src, Time: now, DueAt: now})
		}
	}
	for _, p := range c.sortedPodsLocked("") {
		ca.queueLocked(WatchEvent{Type: watch.Added, Pod: p, Time: now, DueAt: now})
	}
}
