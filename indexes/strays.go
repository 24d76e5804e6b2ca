package indexes

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/podorder"
)

// StrayReason says why an active pod of an Indexed Job has to go.
type StrayReason string

const (
	// StrayNoIndex: the pod has no valid completion index annotation.
	StrayNoIndex StrayReason = "NoIndex"
	// StrayOutOfRange: the pod's index is at or above spec.completions, for example after
	// an elastic scale-down.
	StrayOutOfRange StrayReason = "OutOfRange"
	// StrayDuplicate: another active pod has the same index and is kept instead.
	StrayDuplicate StrayReason = "Duplicate"
)

// Stray is an active pod to remove, with the reason.
type Stray struct {
	// Pod is the pod to remove.
	Pod *corev1.Pod
	// Index is the pod's completion index, or Unknown for StrayNoIndex.
	Index int
	// Reason says why the pod is removed.
	Reason StrayReason
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
	// Active holds the indexes of Kept, ready to exclude in [FirstPending].
	Active Intervals
}

// Strays sorts out the active pods of an Indexed Job (pods not yet terminal and not
// being deleted; Strays does not check that). A pod is to be removed when it has no valid
// index, when its index is at or above completions, or when another active pod of the
// same index sorts after it in removal order (podorder.Compare): of the pods of one
// index, the one that podorder would remove last is kept, as upstream does. Every other
// active pod is kept.
//
// The result does not depend on the order of pods. Strays runs in O(n log n) for n pods,
// allocating O(n); it modifies neither the slice nor the pods.
func Strays(pods []*corev1.Pod, completions int) StraysResult {
	type entry struct {
		pod *corev1.Pod
		ix  int
	}
	entries := make([]entry, len(pods))
	for i, p := range pods {
		entries[i] = entry{pod: p, ix: podIndex(p)}
	}
	// Within an index, removal order; podorder is only consulted on ties, which are rare.
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.ix, b.ix); c != 0 {
			return c
		}
		return podorder.Compare(a.pod, b.pod)
	})

	var res StraysResult
	for i, e := range entries {
		switch {
		case e.ix == Unknown:
			res.Remove = append(res.Remove, Stray{Pod: e.pod, Index: Unknown, Reason: StrayNoIndex})
		case e.ix >= completions:
			res.Remove = append(res.Remove, Stray{Pod: e.pod, Index: e.ix, Reason: StrayOutOfRange})
		case i+1 < len(entries) && entries[i+1].ix == e.ix:
			res.Remove = append(res.Remove, Stray{Pod: e.pod, Index: e.ix, Reason: StrayDuplicate})
		default:
			if res.Kept == nil {
				res.Kept = make([]*corev1.Pod, 0, len(entries)-i)
			}
			res.Kept = append(res.Kept, e.pod)
			if n := len(res.Active); n > 0 && res.Active[n-1].Last+1 == e.ix {
				res.Active[n-1].Last = e.ix
			} else {
				res.Active = append(res.Active, Interval{First: e.ix, Last: e.ix})
			}
		}
	}
	return res
}
