package indexes

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PartError describes one invalid comma-separated part of an interval string.
type PartError struct {
	// Part is the text of the part as it appeared in the input.
	Part string
	// Position is the 0-based position of the part among the comma-separated parts.
	Position int
	// Reason says in words what is wrong with the part; errors.Is with
	// [ErrOutOfRange], [ErrUnordered] or [ErrSyntax] tells the kinds apart.
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
	case strings.HasPrefix(e.Reason, reasonOutOfRange):
		return ErrOutOfRange
	case e.Reason == reasonOutOfOrder || e.Reason == reasonOverlapping:
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

// Reasons used in PartError.Reason; callers match the error classes above
// instead.
const (
	reasonEmpty       = "empty part"
	reasonNotNumber   = "not a non-negative decimal number"
	reasonDecreasing  = "range end is lower than its start"
	reasonOutOfRange  = "index out of range"
	reasonOutOfOrder  = "not in increasing order"
	reasonOverlapping = "overlaps the previous part"
	reasonTooManyDash = "more than two parts separated by '-'"
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
			errs = append(errs, PartError{Part: part, Position: pos, Reason: fmt.Sprintf("%s: must be below %d", reasonOutOfRange, limit)})
			if iv.First >= limit {
				continue
			}
			iv.Last = limit - 1
		}
		if iv.First <= prevLast {
			reason := reasonOutOfOrder
			if iv.Last >= prevLast || (len(out) > 0 && iv.First >= out[len(out)-1].First) {
				reason = reasonOverlapping
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
		return Interval{}, reasonEmpty
	}
	first, last, isRange := strings.Cut(part, "-")
	if isRange && strings.Contains(last, "-") {
		return Interval{}, reasonTooManyDash
	}
	a, ok := parseIndex(first)
	if !ok {
		return Interval{}, reasonNotNumber
	}
	if !isRange {
		return Interval{First: a, Last: a}, ""
	}
	b, ok := parseIndex(last)
	if !ok {
		return Interval{}, reasonNotNumber
	}
	if b < a {
		return Interval{}, reasonDecreasing
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
