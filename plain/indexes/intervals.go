package indexes

import (
	"iter"
	"math"
	"slices"
	"strconv"
)

// NoLimit passed as the limit of [Parse] accepts every index up to math.MaxInt32.
const NoLimit = -1

// Interval is an inclusive range of completion indexes, First <= Last.
type Interval struct {
	First int
	Last  int
}

// Count returns the number of indexes in the interval.
func (iv Interval) Count() int { return iv.Last - iv.First + 1 }

// Intervals is an ordered list of disjoint inclusive intervals. Intervals built by this
// package are canonical: sorted, non-overlapping and non-adjacent (two intervals are
// separated by at least one missing index), within [0, math.MaxInt32], so equal sets
// have equal Intervals. The nil value is the empty set, and every empty result of this
// package is nil. Methods never modify their receiver, and their results never share
// memory with it.
//
// Values are normalized on the way in: [Parse], [FromIndexes] and [Normalize] are the
// ways to build one, and every method returns a canonical value. The methods read
// their receiver and arguments as canonical without checking (a check would turn the
// O(log n) Has into O(n)): a slice written by hand, or read from elsewhere, goes
// through [Normalize] first; [Intervals.Canonical] tells whether it needs to.
type Intervals []Interval

// normalize sorts and merges arbitrary intervals into canonical form. It reorders ivs.
func normalize(ivs Intervals) Intervals {
	slices.SortFunc(ivs, func(a, b Interval) int { return a.First - b.First })
	var out Intervals
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, iv.Last)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// Normalize returns the canonical set of the indexes that ivs covers, for a list of
// intervals in any order, overlapping or adjacent. An interval with First > Last is
// empty and is dropped; indexes below 0 or above math.MaxInt32 (which no completion
// index can take) are cut off. It runs in O(n log n), or O(n) when ivs is already
// canonical, and never modifies ivs.
func Normalize(ivs []Interval) Intervals {
	if Intervals(ivs).Canonical() {
		return clone(ivs)
	}
	out := make(Intervals, 0, len(ivs))
	for _, iv := range ivs {
		iv.First, iv.Last = max(iv.First, 0), min(iv.Last, math.MaxInt32)
		if iv.First <= iv.Last {
			out = append(out, iv)
		}
	}
	return normalize(out)
}

// Canonical reports whether ivs is in the form every function of this package returns:
// sorted, each interval non-empty, separated by at least one missing index, within
// [0, math.MaxInt32]. It runs in O(n).
func (ivs Intervals) Canonical() bool {
	for i, iv := range ivs {
		if iv.First < 0 || iv.First > iv.Last || iv.Last > math.MaxInt32 {
			return false
		}
		if i > 0 && iv.First <= ivs[i-1].Last+1 {
			return false
		}
	}
	return true
}

// FromIndexes builds canonical Intervals from indexes in any order; duplicates are
// merged, and negative values and values above math.MaxInt32 (which no completion index
// can take) are ignored. It runs in O(n log n) and never modifies xs.
func FromIndexes(xs []int) Intervals {
	return fromIndexesWhere(xs, func(int) bool { return true })
}

// validIndex reports whether x can be a completion index: the API stores them as int32.
func validIndex(x int) bool { return x >= 0 && x <= math.MaxInt32 }

// String writes the canonical status form: a single index as "a", two consecutive
// indexes as "a,b" and three or more as "a-c", joined by commas. The empty set is "".
func (ivs Intervals) String() string {
	if len(ivs) == 0 {
		return ""
	}
	buf := make([]byte, 0, len(ivs)*8)
	for i, iv := range ivs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(iv.First), 10)
		switch {
		case iv.Last == iv.First+1:
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(iv.Last), 10)
		case iv.Last > iv.First:
			buf = append(buf, '-')
			buf = strconv.AppendInt(buf, int64(iv.Last), 10)
		}
	}
	return string(buf)
}

// Has reports whether x is in the set, in O(log n).
func (ivs Intervals) Has(x int) bool {
	_, found := slices.BinarySearchFunc(ivs, x, func(iv Interval, x int) int {
		switch {
		case iv.Last < x:
			return -1
		case iv.First > x:
			return 1
		}
		return 0
	})
	return found
}

// Count returns the number of indexes in the set.
func (ivs Intervals) Count() int {
	n := 0
	for _, iv := range ivs {
		n += iv.Count()
	}
	return n
}

// Union returns the canonical union of two sets in O(len(a)+len(b)).
func (ivs Intervals) Union(other Intervals) Intervals {
	if len(other) == 0 {
		return clone(ivs)
	}
	if len(ivs) == 0 {
		return clone(other)
	}
	out := make(Intervals, 0, len(ivs)+len(other))
	push := func(iv Interval) {
		if n := len(out); n > 0 && iv.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, iv.Last)
			return
		}
		out = append(out, iv)
	}
	i, j := 0, 0
	for i < len(ivs) || j < len(other) {
		if j >= len(other) || (i < len(ivs) && ivs[i].First <= other[j].First) {
			push(ivs[i])
			i++
		} else {
			push(other[j])
			j++
		}
	}
	return out
}

// WithSorted returns the set with the indexes of xs added. xs should be sorted in
// increasing order (duplicates allowed), which makes it run in O(len(ivs)+len(xs));
// unsorted xs are still handled correctly, in O(len(xs) log len(xs)) more. Negative
// values and values above math.MaxInt32 are ignored.
func (ivs Intervals) WithSorted(xs []int) Intervals {
	if len(xs) == 0 {
		return clone(ivs)
	}
	add := make(Intervals, 0, len(xs))
	for _, x := range xs {
		if !validIndex(x) {
			continue
		}
		n := len(add)
		if n > 0 && x < add[n-1].First {
			return ivs.Union(FromIndexes(xs))
		}
		if n > 0 && x <= add[n-1].Last+1 {
			add[n-1].Last = max(add[n-1].Last, x)
			continue
		}
		add = append(add, Interval{First: x, Last: x})
	}
	return ivs.Union(add)
}

// IntersectionCount returns how many indexes the two sets share, in O(len(a)+len(b)).
func (ivs Intervals) IntersectionCount(other Intervals) int {
	n, i, j := 0, 0, 0
	for i < len(ivs) && j < len(other) {
		lo := max(ivs[i].First, other[j].First)
		hi := min(ivs[i].Last, other[j].Last)
		if lo <= hi {
			n += hi - lo + 1
		}
		if ivs[i].Last < other[j].Last {
			i++
		} else {
			j++
		}
	}
	return n
}

// Trim returns the set without the indexes at or above limit, as an elastic Indexed Job
// needs when its completions shrink.
func (ivs Intervals) Trim(limit int) Intervals {
	if limit <= 0 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(ivs, limit, func(iv Interval, limit int) int {
		if iv.Last < limit {
			return -1
		}
		return 1
	})
	partial := i < len(ivs) && ivs[i].First < limit
	if i == 0 && !partial {
		return nil
	}
	out := make(Intervals, i, i+1)
	copy(out, ivs[:i])
	if partial {
		out = append(out, Interval{First: ivs[i].First, Last: limit - 1})
	}
	return out
}

// clone copies ivs; the copy of an empty set is nil, so that equal sets stay equal
// under reflect.DeepEqual and cmp.Diff.
func clone(ivs Intervals) Intervals {
	if len(ivs) == 0 {
		return nil
	}
	return slices.Clone(ivs)
}

// All iterates over every index of the set in increasing order.
func (ivs Intervals) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, iv := range ivs {
			for x := iv.First; x <= iv.Last; x++ {
				if !yield(x) {
					return
				}
			}
		}
	}
}
