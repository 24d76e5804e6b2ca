// Package indexes holds the completion-index bookkeeping of Indexed Jobs: sets of
// indexes in the status form "1,3-5,7", the index of a pod, which indexes succeeded or
// failed, which index comes next, which active pods are strays or duplicates, how the
// pod of an index is shaped, and the per-index failure counts carried by annotations.
//
// # Two layers
//
// The rules live in the plain layer, package github.com/jobkit/jobkit/plain/indexes
// (which imports nothing but the Go library): the interval sets ([plainindexes.Intervals],
// [plainindexes.Parse], [plainindexes.FromIndexes], [plainindexes.FirstPending]),
// [plainindexes.FailureCount], the first-outcome-wins rule of [plainindexes.Outcomes],
// the stray rule. This package converts Jobs and pods onto it and adds only what reads
// or shapes them: [PodIndex], [PodFailureCount], [JobOutcomes], [SucceededIndexes],
// [FailedIndexes], [Strays], [ShapePod], the pod names and the failure-count
// annotations. It re-exports nothing: a name of the plain layer is imported from there.
// A scheduler without Kubernetes objects imports only the plain package.
//
// # Invariants
//
// Every Intervals that this package returns is canonical: intervals are sorted, each has
// First <= Last, and two intervals are separated by at least one missing index (no
// overlap, no adjacency). Equal sets therefore have equal Intervals (cmp.Diff and
// slices.Equal work), and String gives one text per set; the empty set is always nil.
// Indexes lie in [0, math.MaxInt32], the range of the API's int32 fields.
//
// Functions never modify their receiver or arguments, and a returned Intervals never
// shares memory with an input. The exceptions say that they MODIFY their argument
// ([ShapePod], [SetFailureCountAnnotations]): they are meant for the caller's own copy of
// the pod template, never for an object from an informer. [Strays] returns the caller's
// pod pointers, unmodified.
//
// Bad input never panics and never loses the valid part: plainindexes.Parse returns
// every valid part along with a *ParseError listing each invalid one; [SucceededIndexes] and
// [FailedIndexes] keep the valid part of the status and wrap the *ParseError with the
// field name; [PodIndex] and [PodFailureCount] return an *AnnotationError naming the pod,
// the key and the value.
//
// # Cost
//
// For sets of a and b intervals, s a string length, p pods and n requested indexes:
//
//	JobOutcomes                O(s + p log p)
//	SucceededIndexes           O(s + p log p)
//	FailedIndexes              O(s + p log p)
//	Strays                     O(p log p)
//	PodIndex                   O(1), no allocation unless the annotation is invalid
//
// The interval operations cost what the plain package documents. The benchmarks in
// this package measure these at 10, 1,000 and 100,000 indexes or pods.
//
// # Concurrency
//
// Functions keep no state. Reading the same Intervals or pods from several goroutines is
// safe; [ShapePod] and [SetFailureCountAnnotations] write to their pod and need the usual
// exclusive access.
//
// # Differences from upstream
//
//   - Parsing: upstream's controller skips parts that are not numbers, stops at the first
//     index at or above completions and assumes the rest is ordered. plainindexes.Parse
//     reports every bad part, keeps every good one, and merges parts out of order or overlapping,
//     so a damaged status never drops a completed index. A part with two '-' ("1-2-3") is
//     rejected where upstream reads it as "1-2". [SucceededIndexes] and [FailedIndexes]
//     trim indexes at or above completions silently (an elastic scale-down leaves them)
//     and report only syntax errors.
//   - Indexes above math.MaxInt32 are invalid everywhere ([PodIndex] reports them; upstream
//     accepts any int and then finds the pod out of range, with the same outcome).
//   - [Strays] breaks ties between pods of one index with podorder's total order, so the
//     same pod survives whatever the input order; upstream's sort is not stable.
//   - [GenerateName] drops dots left at the end of a cut job name ("a.-3-" would be an
//     invalid name); otherwise it cuts as upstream does.
//   - [SetFailureCountAnnotations] removes an ignored-failure-count annotation copied from
//     the template when the count is 0; upstream leaves it.
//   - plainindexes.FirstPendingFunc is jobkit's addition (see its documentation).
package indexes
