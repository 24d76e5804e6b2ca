// Package plain is the root of jobkit's plain layer: the arithmetic of the batch/v1 Job
// controller over ints, durations, times, index sets and small structs of facts, with
// no Kubernetes type in sight. Every package under plain/ imports only the standard
// library, directly and transitively (hack/plain-deps.sh, run by the test command,
// enforces it), so a program built on them holds no Kubernetes package.
//
// It is for schedulers and tools that have no Kubernetes objects at all, and it is
// what jobkit's Kubernetes layer calls: that layer reads the fields of Jobs and pods,
// converts them to plain values and calls these packages, so each rule is written once.
// A package here carries the name of the Kubernetes-layer package of the same concept
// (import it with an alias, such as plainindexes, beside the Kubernetes one). The
// Kubernetes-layer package only converts pods and Jobs onto it and re-exports none of
// its names: a plain type, constant or function is always imported from here.
//
// This package holds no code. The packages:
//
//	plain/indexes           completion-index sets ("1,3-5,7"): parse, format, union,
//	                        intersection, has, trim, first pending; which indexes
//	                        succeeded or failed (first outcome wins), whether an index
//	                        has failed, strays and duplicates per index
//	plain/backoff           the delay before a new pod after failures, the failure
//	                        record and its update, the per-index delay
//	plain/active            how many pods a Job wants running (wantActive)
//	plain/podorder          which active pods to stop first, over plain pod facts
//	plain/ledger            the uncounted-pods ledger: record finished pods, settle
//	                        after finalizer removals
//	plain/podfailurepolicy  failure rules over exit codes and pod condition types
//	plain/successpolicy     success rules over index strings and counts
//	plain/concurrency       single-pod concurrency limits
//	plain/deadlines         pod deadlines
//	plain/group             groups of roles (JobSet): failure, success, startup
//	                        and restart rules over the facts of child jobs
//	plain/fielderr          the validation error of group, podfailurepolicy and
//	                        successpolicy: field, kind, value, the API's words
package plain
