package plan

import (
	"encoding/json"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// MaxObjectBytes is the largest object the API server can store with etcd's default
// request limit (--max-request-bytes, 1.5 MiB): a write of a larger object is
// refused, and would be refused again on every retry. Compute fails an owner whose
// status would push it over (reason StatusTooLarge) instead.
const MaxObjectBytes = 3 << 19

// reasonStatusTooLarge is the reason of the failure of an owner whose status would
// not fit in MaxObjectBytes: jobkit's, the Job controller has none (it retries the
// refused write forever, kubernetes #118085).
const reasonStatusTooLarge = "StatusTooLarge"

// msgStatusTooLarge is its message: the owner's kind, the bytes the status would
// need and what is left of the limit.
const msgStatusTooLarge = "%s status would exceed the object size limit: its completed and failed indexes need %d bytes, %d are left of %d"

// checkIndexBytes is the size of the index strings below which Compute does not
// measure the object: the rest of an object is far smaller than MaxObjectBytes
// minus this, so the common path pays nothing for the check.
const checkIndexBytes = 512 << 10

// Bounds of the parts of a status other than the index strings and the ledger,
// used by WorstStatusSize: the counters, times and field names, and one
// condition with the longest message Compute writes (a kind name of up to 63
// characters included).
const (
	statusFixedBytes     = 1 << 10
	conditionBytes       = 512
	maxStatusConditions  = 4 // Suspended, an interim condition, a terminal one, and one more
	uncountedEntryBytes  = 36 + 3
	uncountedFixedBytes  = 64
	statusTooLargeMargin = 4 << 10 // what the index strings may not use of what is left
)

// WorstStatusSize returns an upper bound of the size, in bytes of JSON, of any status
// Compute writes for an owner with this spec under o: the completed and failed
// indexes in their longest shape (every index written as a number of its own: runs
// of two with gaps of one in completedIndexes, or, under backoffLimitPerIndex, the
// two lists interleaved), the uncounted ledger full (o.MaxUncounted UIDs), four
// conditions with their longest messages and every counter at its largest. A spec
// whose bound, with the rest of its object, stays under MaxObjectBytes can never
// meet the limit; Compute checks the status it builds either way.
//
// Cost: O(number of digits of completions).
func (s Spec) WorstStatusSize(o Options) int {
	n := statusFixedBytes + maxStatusConditions*conditionBytes +
		uncountedFixedBytes + o.maxUncounted()*uncountedEntryBytes
	completions, _ := s.sizes()
	if completions == nil || *completions <= 0 || s.CompletionMode == nil || *s.CompletionMode != "Indexed" {
		return n
	}
	c := int(*completions)
	if s.BackoffLimitPerIndex != nil {
		return n + numbersBytes(c, 1, 1)
	}
	// One list: at most two of every three indexes are written ("0,1,3,4,..."):
	// a longer run is written as "first-last".
	return n + numbersBytes(c, 2, 3)
}

// numbersBytes bounds the length of a list of indexes below c where at most num of
// every den consecutive indexes are written, each as its number and a comma.
func numbersBytes(c, num, den int) int {
	total := 0
	for lo, digits := 0, 1; lo < c; digits++ {
		hi := 9 // the last number with this many digits
		if lo > 0 {
			hi = lo*10 - 1
		}
		count := min(c-1, hi) - lo + 1
		written := count
		if den > 1 {
			written = (count*num+den-1)/den + 1
		}
		total += written * (digits + 1)
		lo = hi + 1
	}
	return total
}

// intervalsBytes is len(ivs.String()), without building it.
func intervalsBytes(ivs plainindexes.Intervals) int {
	n := 0
	for i, iv := range ivs {
		if i > 0 {
			n++
		}
		n += digitsOf(iv.First)
		if iv.Last > iv.First {
			n += 1 + digitsOf(iv.Last)
		}
	}
	return n
}

func digitsOf(x int) int {
	d := 1
	for x >= 10 {
		x /= 10
		d++
	}
	return d
}

// statusRoom returns how many bytes the index strings of w's status may take: what
// MaxObjectBytes leaves once the rest of the object is counted (its JSON less the
// index strings it holds now, or its template's when Object is not set), less a
// margin for the counters and conditions a sync changes.
func statusRoom(w *Workload) int {
	rest := 0
	if w.Object != nil {
		if b, err := json.Marshal(w.Object); err == nil {
			rest = len(b) - len(w.Status.CompletedIndexes)
			if w.Status.FailedIndexes != nil {
				rest -= len(*w.Status.FailedIndexes)
			}
		}
	}
	if rest <= 0 {
		if b, err := json.Marshal(&w.Spec.Template); err == nil {
			rest = len(b) + statusFixedBytes + maxStatusConditions*conditionBytes
		}
	}
	return MaxObjectBytes - rest - statusTooLargeMargin
}
