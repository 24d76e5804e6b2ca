package indexes

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/podorder"
)

// Stray is an active pod to remove, with the reason.
type Stray struct {
	// Pod is the pod to remove.
	Pod *corev1.Pod
	// Index is the pod's completion index, or plainindexes.Unknown for
	// plainindexes.StrayNoIndex.
	Index int
	// Reason says why the pod is removed.
	Reason plainindexes.StrayReason
}

// StraysResult is the outcome of [Strays].
type StraysResult struct {
	// Remove lists the pods to remove: first those without an index, then by increasing
	// index (duplicates and out-of-range pods), pods of the same index in removal order
	// (package podorder).
	Remove []Stray
	// Kept holds the one active pod kept per index below completions, by increasing
	// index.
	Kept []*corev1.Pod
	// Active holds the indexes of Kept, ready to exclude in [plainindexes.FirstPending].
	Active plainindexes.Intervals
}

// Strays sorts out the active pods of an Indexed owner of kind (pods not yet terminal and not
// being deleted; Strays does not check that). A pod is to be removed when it has no valid
// index, when its index is at or above completions, or when another active pod of the
// same index sorts after it in removal order (podorder.Compare): of the pods of one
// index, the one that podorder would remove last is kept, as upstream does. Every other
// active pod is kept.
//
// The rule is the plain layer's ([plainindexes.Strays]); this reads the pods' index
// annotations (kind.IndexKey) and compares pods with podorder.Compare. The result does not depend on
// the order of pods. Strays runs in O(n log n) for n pods,
// allocating O(n); it modifies neither the slice nor the pods.
func Strays(kind owner.Kind, pods []*corev1.Pod, completions int) StraysResult {
	key := kind.IndexKey()
	ix := make([]int, len(pods))
	for i, p := range pods {
		ix[i] = podIndex(key, p)
	}
	plain := plainindexes.Strays(ix, completions, func(i, j int) int { return podorder.Compare(pods[i], pods[j]) })
	res := StraysResult{Active: plain.Active}
	if len(plain.Remove) > 0 {
		res.Remove = make([]Stray, len(plain.Remove))
		for k, s := range plain.Remove {
			res.Remove[k] = Stray{Pod: pods[s.Pos], Index: s.Index, Reason: s.Reason}
		}
	}
	if len(plain.Kept) > 0 {
		res.Kept = make([]*corev1.Pod, len(plain.Kept))
		for k, i := range plain.Kept {
			res.Kept[k] = pods[i]
		}
	}
	return res
}
