// Package active computes how many pods (or tasks) a Job wants running at once, the
// batch/v1 Job controller's wantActive, from plain numbers: completions, parallelism,
// how many completions are already done, how many run now, and whether the Job is
// suspended. It imports only the standard library.
//
// A controller compares [Want] with the pods it runs: more running than wanted means
// removing some (in plain/podorder's order), fewer means creating some (for an Indexed
// Job, at the indexes plain/indexes.FirstPending picks).
//
// # Invariants
//
// Want(j) >= 0 always. Want(j) <= max(Parallelism, 0), except for a work queue after a
// success, whose Want is the pods that run now (it lets them finish, and starts none).
// A suspended Job wants 0. Want never reads the clock and keeps no state.
//
// # Completion mode
//
// The completion mode does not change the number, only what Succeeded counts: the
// succeeded pods of a NonIndexed Job, the succeeded indexes of an Indexed Job. Failed
// indexes (backoffLimitPerIndex) do not lower it either, as upstream: the search for
// pending indexes skips them, so no pod is created for them, but they still count in
// the room that completions leaves.
//
// # Cost and concurrency
//
// O(1), no allocation; safe for concurrent use.
package active
