// Package concurrency decides whether a single-pod job (a CI run, a build, a
// test) may start now, given the other jobs that share its limits, as Prow's
// plank reconciler does for ProwJobs; and it offers the keyed try-lock that
// keeps two workers from both seeing the same free slot. It imports only the
// standard library: jobs are identified by UIDs of any string type (string, or
// Kubernetes' types.UID: Peer[types.UID]); there is no Kubernetes-layer twin.
//
// # Limits
//
// [Decide] applies three limits in order, and the first one that blocks wins:
// a global cap on pending jobs ([Limits].MaxPending), a cap per job name
// ([Candidate].MaxConcurrency) and a capacity per queue ([Limits].Queues). A
// job that is blocked stays triggered and asks again after
// [Decision].RetryAfter. The per-name and per-queue limits count the peers
// that are pending plus the triggered peers created before the candidate, so
// triggered jobs start in creation order without any shared state: the
// oldest waiting job sees a free slot first, and the younger ones count it as
// taken until it has started and become pending.
//
// Peers are plain data ([Peer]): a controller lists its jobs from an informer
// cache and maps each one. Pods are never counted, only jobs. A decision is
// only as fresh as that cache: a job that just became pending must be visible
// before the next decision, which is why plank waits until its cache shows a
// state it just wrote, and why a controller takes a [KeyedMutex] per job name
// and per queue around "decide, create the pod, record pending".
//
// # Invariants
//
//   - The candidate never counts against itself (peers with its UID are skipped).
//   - Finished peers never count; triggered peers never count against the
//     global cap; a triggered peer created later than the candidate never
//     counts against it.
//   - If Decide allows a job, every configured limit was respected:
//     Pending < MaxPending, SameName < MaxConcurrency, SameQueue < capacity.
//   - When only one per-name or per-queue limit applies and no peer is
//     pending, exactly the earliest min(limit, waiting) triggered jobs are
//     allowed.
//   - A KeyedMutex holds a map entry only for keys locked at the moment.
//
// # Cost
//
// Decide is one pass over the peers: O(n), no allocation when it allows the
// job; when it blocks, only the message allocates. 10,000 peers take about
// 0.15ms (most of it loading the peers' strings from memory). Decide reads no
// clock. KeyedMutex operations are O(1) (TryLockAll is
// O(keys)) under one mutex; a successful lock allocates its unlock closure.
//
// # Concurrency
//
// Decide is a pure function and safe for concurrent use; it does not modify
// or retain its arguments. [KeyedMutex] is safe for concurrent use.
//
// # Differences from plank
//
//   - Ties: plank counts a triggered peer only when it was created strictly
//     earlier, so two jobs with the same creation time (Kubernetes timestamps
//     have one-second resolution) do not count each other and can both start
//     past the limit. Decide breaks ties by UID, so exactly one goes first.
//   - Validation first: plank looks the queue up only after the global and
//     per-name limits passed, so an unknown queue goes unnoticed while
//     another limit blocks. Decide rejects bad input (unknown queue, negative
//     limits, an empty candidate UID, a peer with an unknown state) before it
//     applies any limit, so the error does not depend on the other jobs.
//   - Plank relies on its configuration loader to reject negative limits and
//     unknown queues; Decide checks them itself and returns an [*InputError]
//     naming the field (matching [ErrUnknownQueue] for a missing queue).
//   - The candidate is skipped by UID in every count, including the global
//     one. Plank only consults the limits for a triggered job, which the
//     global count skips anyway; Decide gives the same answer when asked
//     again for a job that already became pending.
//   - The wait before asking again is configurable ([Limits].RetryAfter);
//     plank's is fixed at 10s, which is the default here.
//   - [KeyedMutex.TryLockAll] takes several keys atomically; plank takes its
//     job-name lock and then its queue lock one by one.
package concurrency
