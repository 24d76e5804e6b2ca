package reconciletest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// WatchEvent is a change to one stored object, as a watch would report it. Exactly
// one of Pod, Job and Task is set; it is the object after the change (its last
// state for Deleted). The objects are shared, never modified: do not modify them.
type WatchEvent struct {
	Type watch.EventType
	Pod  *corev1.Pod
	Job  *batchv1.Job
	Task *Task
	// Time is when the change was written; DueAt when it may be delivered by
	// DeliverDue (Time plus the event latency at that moment).
	Time  time.Time
	DueAt time.Time

	seq uint64 // queue order, to find an event again
}

// String renders the event on one line.
func (e WatchEvent) String() string {
	if e.Pod != nil {
		return fmt.Sprintf("%s pod %s/%s rv=%s", e.Type, e.Pod.Namespace, e.Pod.Name, e.Pod.ResourceVersion)
	}
	if e.Job != nil {
		return fmt.Sprintf("%s job %s/%s rv=%s", e.Type, e.Job.Namespace, e.Job.Name, e.Job.ResourceVersion)
	}
	if e.Task != nil {
		return fmt.Sprintf("%s %s %s/%s rv=%s", e.Type, strings.ToLower(e.Task.Kind), e.Task.Namespace, e.Task.Name, e.Task.ResourceVersion)
	}
	return string(e.Type)
}

// objectKind tells the kinds of object apart in an objectKey.
type objectKind uint8

const (
	kindJob objectKind = iota
	kindPod
	kindTask
)

// objectKey identifies the object of an event, to keep per-object order.
type objectKey struct {
	kind objectKind
	name types.NamespacedName
}

func (e WatchEvent) object() objectKey {
	switch {
	case e.Pod != nil:
		return objectKey{kind: kindPod, name: key(e.Pod.Namespace, e.Pod.Name)}
	case e.Task != nil:
		return objectKey{kind: kindTask, name: key(e.Task.Namespace, e.Task.Name)}
	}
	return objectKey{kind: kindJob, name: key(e.Job.Namespace, e.Job.Name)}
}

// taskEvent is a delivered watch event about a Task (see Cache.OnTaskEvent).
type taskEvent struct{ old, new *Task }

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

	jobs    map[types.NamespacedName]*batchv1.Job
	tasks   map[types.NamespacedName]*Task
	pods    map[types.NamespacedName]*corev1.Pod
	pending []WatchEvent
	seq     uint64
	// duringList is what the next pod list delivers once it has its snapshot
	// (DeliverDuringList): that many events, every one when negative, none at 0.
	duringList int

	podHandlers  []func(reconcile.PodEvent)
	jobHandlers  []func(reconcile.OwnerEvent)
	taskHandlers []func(old, new *Task)
}

func newCache(c *Cluster) *Cache {
	ca := &Cache{c: c}
	ca.clearLocked()
	return ca
}

// clearLocked empties the cache's objects.
func (ca *Cache) clearLocked() {
	ca.jobs = map[types.NamespacedName]*batchv1.Job{}
	ca.tasks = map[types.NamespacedName]*Task{}
	ca.pods = map[types.NamespacedName]*corev1.Pod{}
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

// OnJobEvent registers a handler for delivered Job events, converted with
// plan.JobWorkload (an addition has no Old, a deletion no New).
func (ca *Cache) OnJobEvent(h func(reconcile.OwnerEvent)) {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	ca.jobHandlers = append(ca.jobHandlers, h)
}

// OnTaskEvent registers a handler for delivered Task events: old is nil for an
// addition, new is nil for a deletion (old is then the last state known), both
// are set for a change. The Tasks are shared: do not modify them.
func (ca *Cache) OnTaskEvent(h func(old, new *Task)) {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	ca.taskHandlers = append(ca.taskHandlers, h)
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
	var jobEv *reconcile.OwnerEvent
	var taskEv *taskEvent
	switch {
	case ev.Task != nil:
		k := key(ev.Task.Namespace, ev.Task.Name)
		old := ca.tasks[k]
		switch {
		case ev.Type == watch.Deleted:
			delete(ca.tasks, k)
			taskEv = &taskEvent{old: ev.Task}
		case old == nil:
			ca.tasks[k] = ev.Task
			taskEv = &taskEvent{new: ev.Task}
		default:
			ca.tasks[k] = ev.Task
			taskEv = &taskEvent{old: old, new: ev.Task}
		}
	case ev.Pod != nil:
		k := key(ev.Pod.Namespace, ev.Pod.Name)
		old := ca.pods[k]
		switch ev.Type {
		case watch.Deleted:
			delete(ca.pods, k)
			podEv = &reconcile.PodEvent{Type: reconcile.PodDeleted, Old: ev.Pod}
		default:
			ca.pods[k] = ev.Pod
			if old == nil {
				podEv = &reconcile.PodEvent{Type: reconcile.PodAdded, New: ev.Pod}
			} else {
				podEv = &reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: ev.Pod}
			}
		}
	default:
		k := key(ev.Job.Namespace, ev.Job.Name)
		old := ca.jobs[k]
		switch ev.Type {
		case watch.Deleted:
			delete(ca.jobs, k)
			jobEv = &reconcile.OwnerEvent{Old: plan.JobWorkload(ev.Job)}
		default:
			ca.jobs[k] = ev.Job
			if old == nil {
				jobEv = &reconcile.OwnerEvent{New: plan.JobWorkload(ev.Job)}
			} else {
				jobEv = &reconcile.OwnerEvent{Old: plan.JobWorkload(old), New: plan.JobWorkload(ev.Job)}
			}
		}
	}
	podHandlers, jobHandlers, taskHandlers := ca.podHandlers, ca.jobHandlers, ca.taskHandlers
	ca.c.mu.Unlock()
	if !notify {
		return true
	}
	if podEv != nil {
		for _, h := range podHandlers {
			h(*podEv)
		}
	}
	if jobEv != nil {
		for _, h := range jobHandlers {
			h(*jobEv)
		}
	}
	if taskEv != nil {
		for _, h := range taskHandlers {
			h(taskEv.old, taskEv.new)
		}
	}
	return true
}

// Reset models a new informer, as after a controller restart: the cache is emptied,
// the queued events are dropped, and an Added event for every stored object (Jobs
// first, then Tasks, then pods in creation order) is queued, due now.
func (ca *Cache) Reset() {
	c := ca.c
	c.mu.Lock()
	defer c.mu.Unlock()
	ca.clearLocked()
	ca.pending = nil
	ca.duringList = 0
	now := c.clock.Now()
	for _, j := range sortedValues(c.jobs.objs) {
		ca.queueLocked(WatchEvent{Type: watch.Added, Job: j, Time: now, DueAt: now})
	}
	for _, t := range sortedValues(c.tasks.objs) {
		ca.queueLocked(WatchEvent{Type: watch.Added, Task: t, Time: now, DueAt: now})
	}
	for _, p := range c.sortedPodsLocked("") {
		ca.queueLocked(WatchEvent{Type: watch.Added, Pod: p, Time: now, DueAt: now})
	}
}
