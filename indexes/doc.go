// Package indexes holds the completion-index bookkeeping of the pods of Indexed Jobs
// and other Indexed owners: the index of a pod, which active pods are strays or
// duplicates, how the pod of an index is shaped and named, and the per-index failure
// counts carried by annotations. The keys of the label and annotations are the
// owner kind's (owner.Kind.IndexKey and the others; the batch.kubernetes.io/job-*
// keys for a batch/v1 Job, owner.BatchJob).
//
// # Two layers
//
// The rules live in the plain layer, package github.com/jobkit/jobkit/plain/indexes
// (which imports nothing but the Go library): the interval sets ([plainindexes.Intervals],
// [plainindexes.Parse], [plainindexes.FromIndexes], [plainindexes.FirstPending]),
// [plainindexes.FailureCount], the first-outcome-wins rule of [plainindexes.Outcomes],
// the stray rule. This package converts pods onto it and adds only what reads or
// shapes them: [PodIndex], [PodFailureCount], [Strays], [ShapePod], the pod names and
// the failure-count annotations. Which indexes of an owner succeeded or failed is
// plan's decision (one home for that fact). It re-exports nothing: a name of the
// plain layer is imported from there. A scheduler without Kubernetes objects imports
// only the plain package.
//
// # Invariants
//
// Every Intervals that this package returns (StraysResult.Active) is canonical, as
// the plain package's are. Indexes lie in [0, math.MaxInt32], the range of the API's
// int32 fields.
//
// Functions never modify their receiver or arguments, and a returned Intervals never
// shares memory with an input. The exceptions say that they MODIFY their argument
// ([ShapePod], [SetFailureCountAnnotations]): they are meant for the caller's own copy of
// the pod template, never for an object from an informer. [Strays] returns the caller's
// pod pointers, unmodified.
//
// Bad input never panics: [PodIndex] and [PodFailureCount] return an *AnnotationError
// naming the pod, the key and the value.
//
// # Cost
//
// For p pods:
//
//	Strays                     O(p log p)
//	PodIndex                   O(1), no allocation for the default keys unless the
//	                           annotation is invalid
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
//   - Indexes above math.MaxInt32 are invalid everywhere ([PodIndex] reports them; upstream
//     accepts any int and then finds the pod out of range, with the same outcome).
//   - [Strays] breaks ties between pods of one index with podorder's total order, so the
//     same pod survives whatever the input order; upstream's sort is not stable.
//   - [ShapePod] and [PodName] drop dots left at the end of a cut owner name ("a.-3-"
//     would be an invalid name); otherwise they cut as upstream does.
//   - An owner of another kind may choose its own keys (owner.Kind.KeyPrefix).
//   - [SetFailureCountAnnotations] removes an ignored-failure-count annotation copied from
//     the template when the count is 0; upstream leaves it.
//   - plainindexes.FirstPendingFunc is jobkit's addition (see its documentation).
package indexes
