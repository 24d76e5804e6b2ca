// Package backoff computes how long a Job waits before it creates pods again after
// pod failures, as the batch/v1 Job controller of Kubernetes 1.37 does: an exponential
// delay of 10s·2^(n-1), capped at 10 minutes, counted from the finish time of the last
// failure, where n is the number of consecutive failures, job-wide or per index.
//
// # Two layers
//
// The arithmetic lives in the plain layer, package github.com/jobkit/jobkit/plain/backoff
// (which, unlike this package, imports only the standard library): the delay, the time remaining, the failure record and its
// update from finish times, the per-index delay from counts, with one meaning of zero
// (the default) and one way to count failures (n includes the last one). [Policy] is
// that package's type; [Record] has its fields; [Delay], [Remaining],
// [Record.Advance], [IndexRemainingFromCounts], [Merge] and [RemainingForRecord]
// forward to it. This package adds what reads pods: [FinishTime],
// [Record.AdvancePods], [FromPods], [FromPodsFunc] and [IndexRemaining], and the
// [Store]. [Delay] and [Remaining] keep their older meaning of a zero base or max
// (no delay); a Policy's zero fields mean the defaults.
//
// A controller that follows upstream keeps one Record per Job in a [Store], advances
// it on every sync with the newly succeeded and failed pods, and asks
// [RemainingForRecord] before creating pods (Jobs with backoffLimitPerIndex ask
// [IndexRemaining] per index instead). Upstream also never requeues sooner than one
// second; that floor belongs to the caller's requeue logic, not to this package.
//
// # Surviving restarts (jobkit's improvement)
//
// Upstream keeps the job-wide record in memory only, so a restarted controller
// forgets every backoff and recreates failing pods at once (kubernetes issue 114650;
// the fix that closed it moved the record out of the workqueue but kept it in memory). [FromPods] rebuilds the record from the pods that still exist: the failed
// pods that finished after the latest succeeded pod. Its limit: pods deleted from the
// API (by a user, by the pod garbage collector, or by the Job's own cleanup) are not
// seen, so a rebuilt Failures can be lower, and LastFailure earlier, than what was
// lived through. [Merge] combines a stored record and a rebuilt one by keeping the
// better-informed of the two (the later LastFailure, then the higher count). The
// per-index backoff needs no such help: its counts live in pod annotations.
//
// # Invariants
//
//   - 0 <= Delay(n, base, max) <= max(max, 0), and Delay never decreases as n grows;
//     no input overflows.
//   - 0 <= Remaining(...) <= Delay(...), for any pair of times.
//   - A Record built by this package has 0 <= Failures <= math.MaxInt32; LastFailure
//     is the latest counted finish time, and zero when Failures is 0.
//   - Advance and FromPods agree: FromPods(pods) equals
//     Record{}.AdvancePods(succeeded, failed) over the same pods.
//   - Nothing here reads the clock, sorts or modifies its inputs, or keeps pods.
//
// # Cost
//
// Delay, Remaining and the Policy methods are O(1) and do not allocate. FinishTime is
// O(containers + init containers) without allocation (sidecar lookup tries the
// status's own position in the spec first, so it is linear in the usual case).
// Advance, AdvancePods, FromPods and FromPodsFunc are a linear scan without sorting
// and without allocation. Store operations take one mutex and are O(1) on average.
//
// # Concurrency
//
// Functions and Record values are safe for concurrent use. [Store] is safe for
// concurrent use; its Update is an atomic read-modify-write.
//
// # Differences from upstream
//
//   - Records can be rebuilt from pods ([FromPods], [Merge]); see above.
//   - Delay is capped at max for every n. Upstream returns base for the first failure
//     even when base > max; the cap is meant to bound the wait, so it bounds it always.
//     With the default policy this never shows.
//   - Remaining never exceeds Delay. Upstream adds the difference when the finish time
//     lies after the controller's now (clock skew between a node and the controller),
//     so a fast node clock lengthens the wait beyond the cap.
//   - FinishTime takes container times only when all regular containers and all
//     sidecars have terminated. Upstream also takes them when a regular container is
//     still running but every sidecar has terminated; such a time is not a finish time.
//   - When only failures are new, Advance keeps the later of the stored and the new
//     LastFailure. Upstream overwrites it with the newest new failure, which can move
//     it back in time when pod updates arrive out of order.
//   - Failures saturates at math.MaxInt32, and the per-index failure number
//     failed + ignored + 1 is computed in int, so huge annotation values cannot wrap
//     around to a short or negative count.
//   - Inputs are never sorted in place (upstream sorts the caller's pod slices).
package backoff
