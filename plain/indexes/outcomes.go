package indexes

// Outcomes holds the finished indexes of an Indexed Job: those that succeeded
// (status.completedIndexes) and those that failed (status.failedIndexes, with
// backoffLimitPerIndex). An index is finished by its first outcome, so the methods of
// Outcomes never put an index in both sets: the API server refuses a status that
// lists one index as both succeeded and failed, which two pods of one index (after a
// creation hidden from the controller) could otherwise produce.
//
// The zero value holds no finished index. Values are plain data: methods return a new
// Outcomes that shares no memory with the receiver or the arguments.
type Outcomes struct {
	// Succeeded holds the indexes that succeeded.
	Succeeded Intervals
	// Failed holds the indexes that failed.
	Failed Intervals
}

// Record returns o with the indexes of newly finished pods added by the
// first-outcome-wins rule: succeeded holds the indexes of pods that succeeded, failed
// those of pods that failed their index ([IndexFailed]), each in any order and with
// duplicates. It is [Outcomes.WithSucceeded] then [Outcomes.WithFailed]:
//
//   - an index in o.Failed stays failed, whatever pod of it succeeds now;
//   - an index that succeeded, before or in this call, stays succeeded: seen in one
//     call, the success wins.
//
// Indexes outside [0, completions) are ignored (they are strays). The sets of o are
// taken as they are. Record runs in O(a + p log p) for sets of a intervals and p
// indexes, and modifies neither o nor the slices.
func (o Outcomes) Record(completions int, succeeded, failed []int) Outcomes {
	return o.WithSucceeded(completions, succeeded).WithFailed(completions, failed)
}

// WithSucceeded returns o with the indexes of newly succeeded pods added to Succeeded,
// except those at or above completions and those already in Failed.
func (o Outcomes) WithSucceeded(completions int, xs []int) Outcomes {
	failed := o.Failed
	add := fromIndexesWhere(xs, func(x int) bool { return x < completions && !failed.Has(x) })
	return Outcomes{Succeeded: o.Succeeded.Union(add), Failed: clone(o.Failed)}
}

// WithFailed returns o with the indexes of pods that failed their index added to
// Failed, except those at or above completions and those already in Succeeded. Call
// it after [Outcomes.WithSucceeded] for pods seen together, so that the success wins.
func (o Outcomes) WithFailed(completions int, xs []int) Outcomes {
	succeeded := o.Succeeded
	add := fromIndexesWhere(xs, func(x int) bool { return x < completions && !succeeded.Has(x) })
	return Outcomes{Succeeded: clone(o.Succeeded), Failed: o.Failed.Union(add)}
}

// fromIndexesWhere is [FromIndexes] of the valid indexes of xs for which keep holds.
func fromIndexesWhere(xs []int, keep func(int) bool) Intervals {
	ivs := make(Intervals, 0, len(xs))
	for _, x := range xs {
		if validIndex(x) && keep(x) {
			ivs = append(ivs, Interval{First: x, Last: x})
		}
	}
	return normalize(ivs)
}
