// Package ledger keeps the books through which every finished pod of a job is
// counted exactly once, even when the controller crashes at any moment: the
// arithmetic of the Job controller's status.uncountedTerminatedPods, over UIDs of
// any string type (string for a scheduler: Uncounted[string]), int indexes and
// counters, with the standard library only.
//
// A finished pod stays held (in Kubernetes: it keeps the tracking finalizer
// batch.kubernetes.io/job-tracking, so it cannot vanish) until its job has
// recorded it durably. [Record] enters finished pods in the ledger ([Uncounted]);
// the caller stores it, then releases the pods [Recording.Release] names; [Settle]
// then moves the UIDs of released pods from the ledger into the counters.
// Package github.com/jobkit/jobkit/finalizers is this package for Jobs and pods:
// it reads the UIDs and the finalizer from pods and passes the Job status's ledger as
// it is (Uncounted[types.UID]).
//
// # The crash-safe order
//
//  1. s := Settle(stored, held, pending) counts the UIDs whose pods were already
//     released (the Job controller does this first; it frees room in the ledger).
//     pending reports the releases that were accepted but may not show yet.
//  2. r := Record(s.Uncounted, finished, pending, limit) enters the newly finished
//     pods.
//  3. If s.Changed or r.Changed, store the ledger r.Uncounted, the counters grown
//     by s ([Settlement.AddTo]) and the completed indexes merged with
//     r.NewSucceededIndexes. If this fails, stop: no pod may be released first.
//  4. Release the pods at r.Release, noting each as pending first.
//  5. s2 := Settle(r.Uncounted, held, pending ∪ released) and store again if
//     s2.Changed; a failure only delays the counting to the next sync.
//  6. The job may finish only when r.LimitReached is false and the ledger is
//     empty after step 5.
//
// A crash after step 3 leaves UIDs recorded and pods held: the next Record finds
// them already recorded (no new entry) and releases them again. A crash during or
// after step 4 leaves UIDs recorded and pods released: the next Settle counts
// them. A UID is counted only by leaving the ledger in the same store that adds
// it to a counter, and the caller never passes a released pod to Record, so
// nothing is counted twice.
//
// # Invariants
//
//   - No UID is in both lists or twice in one, in any result (corrupted input is
//     repaired and reported as an [Errors] list of [*EntryError]).
//   - Recording.Release names an entry only when its UID is in
//     Recording.Uncounted, its index is in NewSucceededIndexes, or it is
//     NotCounted; an entry left out stays held.
//   - len(Uncounted.Succeeded)+len(Uncounted.Failed)+len(NewSucceededIndexes) is
//     at most the limit unless the input ledger was already above it; Record never
//     adds to a full ledger.
//   - Settlement.Succeeded+len(Settlement.Uncounted.Succeeded) equals the number
//     of input succeeded UIDs after repair (likewise for failed): Settle moves UIDs
//     into counters, it never drops one, and counters only grow (AddTo saturates).
//   - Nothing here mutates its inputs or reads the clock.
//
// # Cost
//
// Record is O(finished + ledger) with one map of that size; Settle is
// O(held + ledger) with one map of the ledger's size, and returns at once when the
// ledger is empty. See the benchmarks for figures at 10, 1,000 and 100,000.
//
// # Concurrency
//
// All functions are pure and safe for concurrent use on inputs that nobody
// mutates.
//
// # Differences from the Job controller
//
//   - The limit: the Job controller walks pods until the lists (plus new
//     indexes) reach 500, processes the pod that reaches it, then stops walking,
//     so even pods that need no new entry wait. Record leaves out only the pods
//     that would need a new entry, keeps releasing pods already recorded and
//     NotCounted pods (so a full ledger always drains), and sets LimitReached only
//     when a pod was really left out. The limit is configurable; 0 means 500.
//   - Corrupted ledgers: the Job controller counts a UID listed twice, or in both
//     lists, once per occurrence. Record and Settle keep it once (in failed when
//     in both) and report it.
//   - A repeated succeeded index costs one entry, not one per pod.
//   - Record walks entries in the caller's order (sort indexed pods by index
//     first to fill low indexes first, as the Job controller does) and returns
//     NewSucceededIndexes sorted.
package ledger
