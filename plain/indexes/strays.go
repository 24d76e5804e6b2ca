package indexes

import (
	"cmp"
	"slices"
)

// Unknown is the index of a pod without a valid completion index.
const Unknown = -1

// StrayReason says why an active pod of an Indexed Job has to go.
type StrayReason string

const (
	// StrayNoIndex: the pod has no valid completion index.
	StrayNoIndex StrayReason = "NoIndex"
	// StrayOutOfRange: the pod's index is at or above completions, for example after
	// an elastic scale-down.
	StrayOutOfRange StrayReason = "OutOfRange"
	// StrayDuplicate: another active pod has the same index and is kept instead.
	StrayDuplicate StrayReason = "Duplicate"
)

// Stray is an active pod to remove, with the reason.
type Stray struct {
	// Pos is the position of the pod in the input of [Strays].
	Pos int
	// Index is the pod's completion index, or Unknown for StrayNoIndex.
	Index int
	// Reason says why the pod is removed.
	Reason StrayReason
}

// StraysResult is the outcome of [Strays]. Pods are given by their position in the
// input.
type StraysResult struct {
	// Remove lists the pods to remove: first those without an index, then by increasing
	// index (duplicates and out-of-range pods), pods of the same index in removal order.
	Remove []Stray
	// Kept holds the one active pod kept per index below completions, by increasing
	// index.
	Kept []int
	// Active holds the indexes of Kept, ready to exclude in [FirstPending].
	Active Intervals
}

// Strays sorts out the active pods of an Indexed Job (pods not yet terminal and not
// being deleted; Strays does not check that), given by their completion indexes: pod i
// has index index[i], negative when it has none. compare(i, j) is the removal order of
// pods i and j (negative when i is to be removed first; plain/podorder's Compare over
// the pods' facts is the Job controller's order), consulted only for pods of one index.
//
// A pod is to be removed when it has no index, when its index is at or above
// completions, or when another active pod of the same index sorts after it in removal
// order: of the pods of one index, the one removed last is kept. Every other active pod
// is kept. When compare is a total order, the result does not depend on the order of
// the input.
//
// Strays runs in O(n log n) for n pods, allocating O(n); it modifies neither index nor
// anything compare reads.
func Strays(index []int, completions int, compare func(i, j int) int) StraysResult {
	// Sorting (index, position) pairs keeps the common comparison on contiguous memory;
	// compare is consulted only on ties, which are rare.
	type entry struct{ ix, pos int }
	entries := make([]entry, len(index))
	for i, ix := range index {
		entries[i] = entry{ix: max(ix, Unknown), pos: i}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := cmp.Compare(a.ix, b.ix); c != 0 {
			return c
		}
		return compare(a.pos, b.pos)
	})

	var res StraysResult
	for k, e := range entries {
		switch {
		case e.ix == Unknown:
			res.Remove = append(res.Remove, Stray{Pos: e.pos, Index: Unknown, Reason: StrayNoIndex})
		case e.ix >= completions:
			res.Remove = append(res.Remove, Stray{Pos: e.pos, Index: e.ix, Reason: StrayOutOfRange})
		case k+1 < len(entries) && entries[k+1].ix == e.ix:
			res.Remove = append(res.Remove, Stray{Pos: e.pos, Index: e.ix, Reason: StrayDuplicate})
		default:
			if res.Kept == nil {
				res.Kept = make([]int, 0, len(entries)-k)
			}
			res.Kept = append(res.Kept, e.pos)
			if n := len(res.Active); n > 0 && res.Active[n-1].Last+1 == e.ix {
				res.Active[n-1].Last = e.ix
			} else {
				res.Active = append(res.Active, Interval{First: e.ix, Last: e.ix})
			}
		}
	}
	return res
}
