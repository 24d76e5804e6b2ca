// Package backoff computes how long a Job (or any group of retried tasks) waits before
// it starts new work after failures, as the batch/v1 Job controller of Kubernetes 1.37
// does: an exponential delay of 10s·2^(n-1), capped at 10 minutes, counted from the
// finish time of the last failure, where n is the number of consecutive failures,
// job-wide or per index. It takes counts, durations and times and imports only the
// standard library; jobkit's Kubernetes layer (github.com/jobkit/jobkit/backoff) reads
// finish times and failure counts from pods and calls it.
//
// # One meaning of zero, one way to count
//
// Zero means the default or nothing: a zero (or negative) [Policy] field is the Job
// controller's default, never "no backoff"; a zero n, a zero [Record] and a zero
// Failures mean no failure, hence no delay; a zero finish time means long ago, hence
// no delay left.
//
// Every function counts failures the same way: n is the number of consecutive
// failures so far, the last one included, so the first failure waits Base.
// [Record].Failures is that n for the job-wide backoff; for an index,
// [Policy.IndexRemaining] turns the earlier-failure counts that the index's last
// failed pod carries into that n (failed + ignored + 1).
//
// # Use
//
// A scheduler keeps one [Record] per group of tasks, advances it with the finish times
// of the tasks that ended since ([Record.Advance]), and asks [Record.Remaining] before
// starting new ones; with per-index retries, it asks [Policy.IndexRemaining] per index
// instead. Upstream also never requeues sooner than one second; that floor belongs to
// the caller's requeue logic, not to this package. [Merge] combines a stored record
// with one rebuilt from the tasks that still exist (the Kubernetes layer rebuilds one
// from pods so that a restarted controller keeps backing off).
//
// # Invariants
//
//   - 0 <= Policy.Delay(n) <= the effective Max, and Delay never decreases as n
//     grows; no input overflows.
//   - 0 <= Policy.Remaining(...) <= Policy.Delay(n), for any pair of times.
//   - A Record built by this package has 0 <= Failures <= math.MaxInt32; LastFailure
//     is the latest counted finish time, and zero when Failures is 0.
//   - Nothing here reads the clock, sorts or modifies its inputs.
//
// # Cost and concurrency
//
// The Policy methods are O(1) and do not allocate. Advance and AdvanceSeq are a linear
// scan without sorting and without allocation. Functions and values are safe for
// concurrent use.
//
// # Differences from upstream
//
//   - Delay is capped at Max for every n. Upstream returns Base for the first failure
//     even when Base > Max; the cap is meant to bound the wait, so it bounds it always.
//     With the default policy this never shows.
//   - Remaining never exceeds Delay. Upstream adds the difference when the finish time
//     lies after the controller's now (clock skew between a node and the controller),
//     so a fast node clock lengthens the wait beyond the cap.
//   - When only failures are new, Advance keeps the later of the stored and the new
//     LastFailure. Upstream overwrites it with the newest new failure, which can move
//     it back in time when pod updates arrive out of order.
//   - Failures saturates at math.MaxInt32, and the per-index failure number
//     failed + ignored + 1 is computed in int, so huge counts cannot wrap around to a
//     short or negative count.
package backoff
