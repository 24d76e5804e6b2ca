package reconciletest

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/plan"
)

// The reads of a Cache: what a controller's listers and lookups return.

// sortedValues returns the objects of m sorted by namespace and name.
func sortedValues[T metav1.Object](m map[types.NamespacedName]T) []T {
	out := make([]T, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	sortByName(out)
	return out
}

// Pod returns the cached pod, or nil.
func (ca *Cache) Pod(namespace, name string) *corev1.Pod {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	return ca.pods[key(namespace, name)]
}

// Pods returns the cached pods of namespace (all when empty) in creation order.
func (ca *Cache) Pods(namespace string) []*corev1.Pod {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	return ca.podsLocked(namespace, nil)
}

func (ca *Cache) podsLocked(namespace string, keep func(*corev1.Pod) bool) []*corev1.Pod {
	return ca.sortedPodsLocked(namespace, keep, ca.pods)
}

// sortedPodsLocked returns the pods of the maps, of namespace (all when empty),
// that keep keeps (all when nil), in creation order.
func (ca *Cache) sortedPodsLocked(namespace string, keep func(*corev1.Pod) bool, from ...map[types.NamespacedName]*corev1.Pod) []*corev1.Pod {
	type entry struct {
		seq uint64
		pod *corev1.Pod
	}
	var entries []entry
	for _, m := range from {
		for k, p := range m {
			if (namespace == "" || k.Namespace == namespace) && (keep == nil || keep(p)) {
				entries = append(entries, entry{ca.c.order[p.UID], p})
			}
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]*corev1.Pod, len(entries))
	for i, e := range entries {
		out[i] = e.pod
	}
	return out
}

// OwnerPods returns what a controller lists for the owner w (plan.JobWorkload
// converts a Job): the cached pods of its namespace whose controller reference
// has its UID, and the orphans matching its spec's selector (none without one),
// in creation order. It is a reconcile.PodLister.
func (ca *Cache) OwnerPods(w *plan.Workload) ([]*corev1.Pod, error) {
	return ca.podsOf(w.Namespace, w.UID, w.Spec.Selector), nil
}

func (ca *Cache) podsOf(namespace string, uid types.UID, selector *metav1.LabelSelector) []*corev1.Pod {
	var sel labels.Selector
	if selector != nil {
		s, err := metav1.LabelSelectorAsSelector(selector)
		if err == nil && !s.Empty() {
			sel = s
		}
	}
	ca.c.mu.Lock()
	from := []map[types.NamespacedName]*corev1.Pod{ca.byOwner[uid]}
	if sel != nil && uid != "" {
		from = append(from, ca.byOwner[""]) // the orphans
	}
	pods := ca.sortedPodsLocked(namespace, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref != nil {
			return ref.UID == uid
		}
		return sel != nil && sel.Matches(labels.Set(p.Labels))
	}, from...)
	n := ca.duringList
	ca.duringList = 0
	ca.c.mu.Unlock()
	switch {
	case n < 0:
		ca.DeliverAll()
	case n > 0:
		ca.DeliverN(n)
	}
	return pods
}

// DeliverDuringList arms the next pod list of the cache (OwnerPods; not
// Pods, the test's own look): once that list has taken its snapshot, and before it
// returns it, up to n queued events are delivered, oldest first, due or not, with
// their handlers; the snapshot shows none of them. n < 0 delivers every queued event
// (DeliverAll), 0 disarms; the arm holds for one list, and Reset drops it.
//
// It models client-go's informer, which updates its store and then calls the
// handlers while a sync still holds the pods it has just listed: when the handler
// runs, the controller's other stores (expectations, pending finalizer removals)
// have seen a change that the list it works from does not show. A sync must read
// those stores before it lists. A seeded simulator draws when to arm it and with
// how many events, and records both so that a run replays.
func (ca *Cache) DeliverDuringList(n int) {
	ca.c.mu.Lock()
	defer ca.c.mu.Unlock()
	ca.duringList = n
}
