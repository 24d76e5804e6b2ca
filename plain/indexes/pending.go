package indexes

// FirstPending returns, in increasing order, the lowest n indexes in [0, completions)
// that are in none of the exclude sets: the indexes an Indexed Job creates pods for next.
// The caller passes what is not pending: succeeded, failed and active indexes, and the
// indexes of terminating pods when podReplacementPolicy is Failed.
//
// Each exclude set must be sorted by First, as every Intervals built by this package
// is; overlaps between the sets are fine. The result holds fewer than n indexes when
// fewer are pending, and is nil when none is or when n or completions is not positive.
//
// FirstPending jumps over excluded intervals instead of visiting their indexes: it runs
// in O((n + t)·k) for k sets holding t intervals in all, whatever completions is, and
// allocates only the result.
func FirstPending(completions, n int, exclude ...Intervals) []int {
	return FirstPendingFunc(completions, n, nil, exclude...)
}

// FirstPendingFunc is [FirstPending] with one more exclusion: an index for which skip
// returns true is passed over, and the search goes on to higher indexes. A nil skip
// excludes nothing. skip is called at most once per index, in increasing order, and only
// for indexes outside every exclude set; each skipped index adds O(k) to the cost.
//
// This is jobkit's addition. Upstream picks the first pending indexes and only then drops
// those still in their per-index backoff, creating fewer pods in that sync. To reproduce
// that, call FirstPending and filter its result; use FirstPendingFunc to fill the
// sync's budget with higher indexes instead.
func FirstPendingFunc(completions, n int, skip func(index int) bool, exclude ...Intervals) []int {
	if n <= 0 || completions <= 0 {
		return nil
	}
	var out []int
	// cursor[s] is the first interval of exclude[s] that may hold x or a higher index.
	var small [8]int
	var cursor []int
	if len(exclude) <= len(small) {
		cursor = small[:len(exclude)]
	} else {
		cursor = make([]int, len(exclude))
	}
	for x := 0; x < completions && len(out) < n; {
		next, excluded := x, false
		for s, ivs := range exclude {
			i := cursor[s]
			for i < len(ivs) && ivs[i].Last < x {
				i++
			}
			cursor[s] = i
			if i < len(ivs) && ivs[i].First <= x {
				excluded = true
				next = max(next, ivs[i].Last)
			}
		}
		if excluded {
			if next >= completions-1 {
				break
			}
			x = next + 1
			continue
		}
		if skip == nil || !skip(x) {
			if out == nil {
				out = make([]int, 0, min(n, completions-x))
			}
			out = append(out, x)
		}
		x++
	}
	return out
}
