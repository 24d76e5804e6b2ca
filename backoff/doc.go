// Package backoff computes how long a Job waits before it creates pods again after
// pod failures, as the batch/v1 Job controller of Kubernetes 1.37 does: an exponential
// delay of 10s·2^(n-1), capped at 10 minutes, counted from the finish time of the last
// failure, where n is the number of consecutive failures, job-wide or per index.
//
// # Two layers
//
// The arithmetic lives in the plain layer, package github.com/jobkit/jobkit/plain/backoff
// (which, unlike this package, imports only the standard library): the [plainbackoff.Policy]
// with its delay and time remaining, the [plainbackoff.Record] and its update from finish
// times, [plainbackoff.Merge], and the per-index delay from counts. This package converts
// pods onto it and adds nothing else: [FinishTime] reads a pod's finish time,
// [AdvancePods], [FromPods] and [FromPodsFunc] build and advance a plain Record from pods,
// [IndexRemaining] reads an index's failure counts from its last failed pod, and [Store]
// keeps one plain Record per Job.
//
// A controller that follows upstream keeps one Record per Job in a [Store], advances
// it on every sync with the newly succeeded and failed pods, and asks
// [plainbackoff.Record.Remaining] before creating pods (Jobs with backoffLimitPerIndex
// ask [IndexRemaining] per index instead). Upstream also never requeues sooner than one
// second; that floor belongs to the caller's requeue logic, not to this package.
//
// # Surviving restarts (jobkit's improvement)
//
// Upstream keeps the job-wide record in memory only, so a restarted controller
// forgets every backoff and recreates failing pods at once (kubernetes issue 114650;
// the fix that closed it moved the record out of the workqueue but kept it in memory).
// [FromPods] rebuilds the record from the pods that still exist: the failed
// pods that finished after the latest succeeded pod. Its limit: pods deleted from the
// API (by a user, by the pod garbage collector, or by the Job's own cleanup) are not
// seen, so a rebuilt Failures can be lower, and LastFailure earlier, than what was
// lived through. [plainbackoff.Merge] combines a stored record and a rebuilt one by keeping the
// better-informed of the two (the later LastFailure, then the higher count). The
// per-index backoff needs no such help: its counts live in pod annotations.
//
// # Invariants
//
//   - The delays are the plain layer's: 0 <= Policy.Delay(n) <= Max, never decreasing
//     as n grows, and 0 <= Remaining <= Delay for any pair of times.
//   - A Record built by this package has 0 <= Failures <= math.MaxInt32; LastFailure
//     is the latest counted finish time, and zero when Failures is 0.
//   - AdvancePods and FromPods agree: FromPods(pods) equals
//     AdvancePods(plainbackoff.Record{}, succeeded, failed) over the same pods.
//   - Nothing here reads the clock, sorts or modifies its inputs, or keeps pods.
//
// # Cost
//
// IndexRemaining is O(1) besides reading two annotations. FinishTime is
// O(containers + init containers) without allocation (sidecar lookup tries the
// status's own position in the spec first, so it is linear in the usual case).
// AdvancePods, FromPods and FromPodsFunc are a linear scan without sorting
// and without allocation. Store operations take one mutex and are O(1) on average.
//
// # Concurrency
//
// Functions are safe for concurrent use. [Store] is safe for
// concurrent use; its Update is an atomic read-modify-write.
//
// # Differences from upstream
//
//   - Records can be rebuilt from pods ([FromPods], [plainbackoff.Merge]); see above.
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
