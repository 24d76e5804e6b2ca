// Package runplan is the whole decision of one sync of a single-pod job (a
// CI run, a build, a test), as Prow's plank reconciler makes it for a
// ProwJob, as a pure function: from the run, its pod, its peers and now,
// [Compute] returns a [Plan] (plain data) that a controller executes. It ties
// together package plain/concurrency (may the run start?), package
// singlepod/deadlines (did its pod time out?) and package singlepod/podoutcome
// (what does its pod say?), adds
// the lifecycle around them (start, adopt, recreate, abort, supersede,
// complete) and the dedupe of older runs (see [Compute]), and classifies pod
// create errors ([ClassifyCreateError], [Plan.CreateFailed]). [Holds],
// [Waits] and [SharesLimit] tell a controller which waiting runs to wake up
// when a run stops holding a slot.
//
// # Flow
//
//	new ──► triggered ──(limits allow: Create / pod exists: Adopt)──► pending
//	            │  └── held back: Wait (reason = the limit, requeue)      │
//	            │                                                         ├─ pod running: Wait (until its timeout)
//	            │                                                         ├─ pod gone: Create again
//	            │                                                         ├─ evicted, node lost, unknown: Revive
//	            ▼                                                         ▼
//	   aborted (user, newer run) ──► Finish: delete pod, complete    Finish: success | failure | error | aborted
//
// A Plan has one [Action] with a Reason, what to record on the run
// ([Status]), what to do to its pod ([PodEffects], including the caller's
// own finalizers) and when to look again. The order of execution is written
// on [Plan]; it keeps a run exact across crashes.
//
// # Reasons
//
// Plan.Reason says why, in one CamelCase word; Action is what to act on. The
// reasons of this package: Completed and UnknownState (None); Start and
// PodMissing (Create); PodExists (Adopt); Superseded, AbortRequested,
// FinalState and PodNotControlled (Finish); NoCreationTime (Wait); and, from
// [Plan.CreateFailed], CreateRefused (Finish), CreateExists (Wait) and
// CreateFailed (Backoff). A run held back waits with the limit as reason
// (MaxPending, MaxConcurrency, Queue, from package plain/concurrency); the
// other reasons are those of package singlepod/podoutcome's steps (Running,
// Evicted, PendingTimeout, ...). The descriptions recorded on the run are
// plank's: "Job triggered.", "Waiting: <why>", "Job aborted.", "Superseded
// by a newer run <name>.", "Replacing pod <pod> (<reason>), revival <n>."
// and "Pod can not be created: <error>" ([MessageCreateRefused]).
//
// # Invariants
//
//   - Every plan carries a Reason; a plan that changes the run's state or
//     description carries the new description.
//   - A run's pod is created only by ActionCreate, and only when the cache
//     shows none; a triggered run's existing pod is adopted, never created
//     twice. A create answered AlreadyExists waits for the cache and adopts.
//   - A run is completed (Status.Complete) only by ActionFinish, after its
//     pod is deleted when Pod.Delete; Compute never completes another run
//     (Supersede only records StateAborted on it).
//   - The revival count rises only on ActionRevive, by one, only for a pod
//     not counted yet, and never above Outcome.MaxRevivals; the new record is
//     written before the pod is deleted.
//   - A pod the run does not control (by controller reference) is never
//     deleted.
//   - Bad pod data (no creation time, no status, an unknown phase) gives a
//     Wait or a retry, never a final state; invalid configuration gives a
//     *plaindl.FieldError naming the field, never a plan.
//   - Nothing reads the clock; nothing modifies the input.
//
// # Cost
//
// Compute is O(len(Peers)): one pass for the dedupe and, for a triggered run
// without a pod, one for the limits, which copies the peers once (one
// allocation). A pending run with a running pod and no dedupe key takes about
// 350ns without allocating, whatever the number of peers; a triggered run
// takes about 1.4µs with 10 peers, 0.13ms with 1,000 and 7ms with 100,000 (on
// a shared 2-core machine). The dedupe allocates only the runs it supersedes.
// See the benchmarks.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use. A decision is only as
// fresh as the caller's cache: a controller holds a plain/concurrency KeyedMutex
// per limit around "compute, create the pod, record pending", and waits
// until its cache shows every write before the next sync.
//
// # Differences from plank
//
//   - The dedupe keys on JobName and an explicit DedupeKey (plank: a digest of
//     the refs), keeps the latest StartTime like plank, and breaks ties by
//     creation time then UID (plank: the order of its list, which nobody
//     controls). It does not complete the run being reconciled: a superseded
//     run finishes through its own plan, which deletes its pod first.
//   - The revival count is written back, tied to the pod's UID (package
//     podoutcome); plank only raises it in memory, so its max revivals never
//     takes effect.
//   - A create answered 409 AlreadyExists adopts the pod (the answer of an
//     earlier create was lost); 404 and 429 are retried. Plank errors the job
//     on every 4xx; [CreateErrorsPlank] restores that.
//   - A timed-out run records its final state before its pod is deleted and
//     is completed after (plank deletes, then records): a failed write
//     cannot make the next sync recreate the pod.
//   - A pod with the run's name that the run does not control is an error;
//     plank adopts any pod with the job's name.
//   - A pod without a creation time is measured from the run's PendingTime,
//     or waits; plank's time.Since of a zero time expires at once.
//   - Time is an argument and running pods are requeued when their timeout
//     would expire (packages deadlines and podoutcome).
//   - An abort deletes the pod only if the run controls it, and by name only
//     when the cache shows none but the run had one; plank deletes by name.
//   - The caller's own pod finalizers are named as an effect
//     (PodEffects.ReleaseFinalizers) when a pod is replaced, whether it is
//     deleted or already terminating; plank strips its reporter's finalizer
//     in that case by itself.
package runplan
