package indexes

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
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

// PartError describes one invalid comma-separated part of an interval string.
type PartError struct {
	// Part is the text of the part as it appeared in the input.
	Part string
	// Position is the 0-based position of the part among the comma-separated parts.
	Position int
	// Reason says what is wrong with the part.
	Reason string
}

// Error describes the part as `part <position> "<text>": <reason>`.
func (e PartError) Error() string {
	return fmt.Sprintf("part %d %q: %s", e.Position, e.Part, e.Reason)
}

// Unwrap returns the class of the fault: [ErrOutOfRange], [ErrUnordered] or
// [ErrSyntax], so that errors.Is tells them apart through a *ParseError.
func (e PartError) Unwrap() error {
	switch {
	case strings.HasPrefix(e.Reason, ReasonOutOfRange):
		return ErrOutOfRange
	case e.Reason == ReasonOutOfOrder || e.Reason == ReasonOverlapping:
		return ErrUnordered
	}
	return ErrSyntax
}

// The classes of invalid parts, matched with errors.Is on a [PartError] or on a
// *[ParseError] holding at least one part of that class.
var (
	// ErrOutOfRange: a part at or above the limit passed to [Parse]. Its indexes below
	// the limit are kept. The Kubernetes layer trims such indexes silently after an
	// elastic scale-down, and uses this to tell them from damage.
	ErrOutOfRange = errors.New("index out of range")
	// ErrUnordered: a part that overlaps or comes before the previous one. It is
	// merged in; the set is still complete.
	ErrUnordered = errors.New("index part out of order")
	// ErrSyntax: a part that is empty, not a number, or a range that is not
	// "first-last" with first <= last. It is dropped.
	ErrSyntax = errors.New("invalid index part")
)

// ParseError reports every invalid part of an interval string. The Intervals returned
// with it still hold every valid part.
type ParseError struct {
	// Input is the string that was parsed.
	Input string
	// Parts lists the invalid parts in input order.
	Parts []PartError
}

// Unwrap returns the invalid parts, so that errors.Is(err, [ErrOutOfRange]) holds when
// any part is out of range.
func (e *ParseError) Unwrap() []error {
	errs := make([]error, len(e.Parts))
	for i, p := range e.Parts {
		errs[i] = p
	}
	return errs
}

// Error names the input (cut to 64 bytes) and up to five invalid parts.
func (e *ParseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid index intervals %q: ", truncate(e.Input, 64))
	for i, p := range e.Parts {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Parts)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Reasons used in PartError.Reason.
const (
	ReasonEmpty       = "empty part"
	ReasonNotNumber   = "not a non-negative decimal number"
	ReasonDecreasing  = "range end is lower than its start"
	ReasonOutOfRange  = "index out of range"
	ReasonOutOfOrder  = "not in increasing order"
	ReasonOverlapping = "overlaps the previous part"
	ReasonTooManyDash = "more than two parts separated by '-'"
)

// Parse reads the status form of an index set ("1,3-5,7"), as written in
// status.completedIndexes, status.failedIndexes and successPolicy succeededIndexes.
// Indexes must be below limit (NoLimit, or any negative limit, allows every index up to
// math.MaxInt32).
//
// Parse keeps every valid part and reports every invalid one in a *ParseError:
//   - an empty part, a part that is not a non-negative decimal number, a range with more
//     than one '-', and a range whose end is below its start are dropped;
//   - a part that reaches the limit is reported and its indexes below the limit are kept;
//   - a part that overlaps or comes before the previous part is reported and merged in,
//     because its indexes are still meaningful (a completed index is never forgotten).
//
// The result is canonical whatever the input. Parse runs in O(len(s)) for ordered input.
func Parse(s string, limit int) (Intervals, error) {
	if s == "" {
		return nil, nil
	}
	if limit < 0 || limit > math.MaxInt32 {
		limit = math.MaxInt32 + 1
	}
	var (
		// One interval per part at most; one allocation beats growing a list of
		// 100,000 intervals step by step.
		out      = make(Intervals, 0, strings.Count(s, ",")+1)
		errs     []PartError
		unsorted Intervals // parts that came out of order; merged at the end
		prevLast = -1
		pos      = 0
	)
	for start := 0; start <= len(s); pos++ {
		end := strings.IndexByte(s[start:], ',')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		part := s[start:end]
		start = end + 1
		iv, reason := parsePart(part)
		if reason != "" {
			errs = append(errs, PartError{Part: part, Position: pos, Reason: reason})
			continue
		}
		if iv.Last >= limit {
			errs = append(errs, PartError{Part: part, Position: pos, Reason: fmt.Sprintf("%s: must be below %d", ReasonOutOfRange, limit)})
			if iv.First >= limit {
				continue
			}
			iv.Last = limit - 1
		}
		if iv.First <= prevLast {
			reason := ReasonOutOfOrder
			if iv.Last >= prevLast || (len(out) > 0 && iv.First >= out[len(out)-1].First) {
				reason = ReasonOverlapping
			}
			errs = append(errs, PartError{Part: part, Position: pos, Reason: reason})
			unsorted = append(unsorted, iv)
			continue
		}
		prevLast = iv.Last
		if n := len(out); n > 0 && out[n-1].Last+1 == iv.First {
			out[n-1].Last = iv.Last
		} else {
			out = append(out, iv)
		}
	}
	if len(unsorted) > 0 {
		out = out.Union(normalize(unsorted))
	}
	if len(out) == 0 || cap(out) > 2*len(out)+8 {
		// Most parts merged or were dropped: do not keep the oversized array alive.
		// (clone also turns an empty result into nil.)
		out = clone(out)
	}
	if len(errs) > 0 {
		return out, &ParseError{Input: s, Parts: errs}
	}
	return out, nil
}

func parsePart(part string) (Interval, string) {
	if part == "" {
		return Interval{}, ReasonEmpty
	}
	first, last, isRange := strings.Cut(part, "-")
	if isRange && strings.Contains(last, "-") {
		return Interval{}, ReasonTooManyDash
	}
	a, ok := parseIndex(first)
	if !ok {
		return Interval{}, ReasonNotNumber
	}
	if !isRange {
		return Interval{First: a, Last: a}, ""
	}
	b, ok := parseIndex(last)
	if !ok {
		return Interval{}, ReasonNotNumber
	}
	if b < a {
		return Interval{}, ReasonDecreasing
	}
	return Interval{First: a, Last: b}, ""
}

// parseIndex accepts only ASCII digits (no sign, no spaces) of a value up to MaxInt32.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(v), true
}

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
