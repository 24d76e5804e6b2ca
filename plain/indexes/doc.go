// Package indexes holds sets of completion indexes over plain numbers and strings: the
// status form "1,3-5,7" (status.completedIndexes, status.failedIndexes, a success
// policy's succeededIndexes), its parsing with every bad part reported, union,
// intersection count, membership, trimming, and the next indexes to start; which
// indexes succeeded or failed, by the Job controller's first-outcome-wins rule
// ([Outcomes]); whether a failed pod fails its index ([IndexFailed]) and the failure
// counts an index carries ([FailureCount]); which active pods of an index are strays
// or duplicates ([Strays]). It imports
// only the standard library, so a scheduler with no Kubernetes object can use it;
// jobkit's Kubernetes layer (github.com/jobkit/jobkit/indexes) reads Jobs and pods and
// calls it.
//
// # Invariants
//
// Every Intervals that this package returns is canonical: intervals are sorted, each has
// First <= Last, and two intervals are separated by at least one missing index (no
// overlap, no adjacency). Equal sets therefore have equal Intervals (cmp.Diff and
// slices.Equal work), and String gives one text per set; the empty set is always nil.
// Indexes lie in [0, math.MaxInt32], the range of the API's int32 fields.
//
// A value is normalized on the way in: [Parse], [FromIndexes] and [Normalize] build
// canonical sets from any input, and the methods read their receiver and arguments as
// canonical without checking it (checking would make [Intervals.Has] linear). A slice
// literal written by hand goes through [Normalize]; [Intervals.Canonical] tells whether
// a value needs it.
//
// The [Outcomes] methods never put an index in both Succeeded and Failed: an index is
// finished by its first outcome, and a success and a failure seen together leave it
// succeeded (the API server refuses an index listed as both).
//
// Functions never modify their receiver or arguments, and a returned Intervals never
// shares memory with an input.
//
// Bad input never panics and never loses the valid part: [Parse] returns every valid
// part along with a *[ParseError] listing each invalid one. errors.Is on that error
// tells the classes apart: [ErrOutOfRange] (a part at or above the limit, its indexes
// below the limit kept), [ErrUnordered] (merged in) and [ErrSyntax] (dropped).
//
// # Cost
//
// For sets of a and b intervals, s a string length and n requested indexes:
//
//	Parse                      O(s), or O(s + u log u) with u parts out of order
//	String                     O(a), one allocation
//	Has                        O(log a)
//	Count, Canonical           O(a)
//	Union, IntersectionCount   O(a + b)
//	WithSorted                 O(a + len(xs)) for sorted xs
//	Trim                       O(log a) plus the copy
//	FromIndexes, Normalize     O(len(xs) log len(xs))
//	FirstPending               O((n + t)·k) for k exclusion sets of t intervals in
//	                           all, whatever completions is; allocates the result only
//	Outcomes.Record            O(a + p log p) for p new indexes
//	Strays                     O(p log p) for p pods
//	IndexFailed                O(1)
//
// The benchmarks in this package measure them at 10, 1,000 and 100,000 indexes or pods.
//
// # Concurrency
//
// Functions keep no state. Reading the same Intervals from several goroutines is safe.
//
// # Differences from upstream
//
//   - Parsing: upstream's controller skips parts that are not numbers, stops at the first
//     index at or above completions and assumes the rest is ordered. [Parse] reports
//     every bad part, keeps every good one, and merges parts out of order or overlapping,
//     so a damaged status never drops a completed index. A part with two '-' ("1-2-3") is
//     rejected where upstream reads it as "1-2".
//   - [FirstPendingFunc] is jobkit's addition (see its documentation).
//   - [Outcomes]: an index is finished by its first outcome. Upstream can list an index
//     in both completedIndexes and failedIndexes when two pods ran for it, which the
//     API server refuses.
//   - [Strays] breaks ties between pods of one index with the caller's comparison,
//     which plain/podorder makes total; upstream's sort is not stable.
package indexes
