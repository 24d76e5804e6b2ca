// Package finalizers keeps the books of Job pod tracking, as the batch/v1 Job
// controller of Kubernetes 1.37 does: the tracking finalizer
// batch.kubernetes.io/job-tracking, the patch that removes it, the
// status.uncountedTerminatedPods ledger through which every finished pod is counted
// exactly once, and the decision to clean the finalizer of orphan pods.
//
// Every function takes the finalizer name, so one door serves every kind of owner: a
// batch/v1 Job's pods carry [Name] (owner.BatchJob.Finalizer), a controller whose
// pods belong to another kind of owner passes its own (owner.Kind.Finalizer), and
// [DecideOrphan] takes the owner.Kind.
//
// The ledger arithmetic is package github.com/jobkit/jobkit/plain/ledger, generic in
// the UID type, and its names (ledger.Outcome and the outcomes ledger.Succeeded,
// ledger.SucceededIndex, ledger.Failed, ledger.NotCounted) are
// used from there: this package re-exports none of them. [Record] and [Settle] read
// the UIDs and the finalizer from pods, pass the Job status's lists as they are
// (ledger.Uncounted[types.UID]), and translate its results and errors back (field
// errors with the paths below). The caller classifies pods (finished or not, counted
// or ignored, which index) and passes the verdict in a [FinishedPod].
//
// # The finalizer
//
// [Has] tells whether a pod carries it; [EnsureOnPod] adds it to a pod's or a
// template's metadata (it mutates its argument and says whether it changed it);
// [RemovalPatch] is the strategic merge patch that removes it and keeps every other
// finalizer, with the pod's UID as a precondition.
//
// # The ledger, and the crash-safe order
//
// A finished pod keeps its finalizer until its owner has recorded it durably, so a
// controller that crashes at any moment neither loses a pod nor counts it twice. The
// steps, and why a crash between any two of them is safe, are written once, in
// plain/ledger's package documentation ("The crash-safe order"); this package runs
// them over pods, where "held" means "carries the finalizer name" and "release" means
// [RemovalPatch]:
//
//   - [Settle](name, status.UncountedTerminatedPods, pods, pending) is its step 1 and
//     [Record](name, &s.Uncounted, finished, pending, limit) its step 2; pending is
//     the set of UIDs whose removal was accepted but is not visible in pods yet (the
//     expectations package keeps it).
//   - Step 3 writes the owner's status; step 4 sends a [RemovalPatch] for each pod in
//     Recording.RemoveFinalizer, recording its UID as pending first. A patch that
//     succeeds, or fails with NotFound, or with Invalid because the UID precondition
//     no longer matches (the pod was replaced), is an accepted removal.
//
// The order of a whole sync (adoption, status, finalizers, deletions, creations) is
// documented on plan.Plan, which reconcile executes.
//
// # Invariants
//
//   - No UID is in both uncounted lists or twice in one, in any result (corrupted
//     input is repaired and reported).
//   - A pod is in [Recording.RemoveFinalizer] only when its UID is in
//     Recording.Uncounted, its index is in NewSucceededIndexes, or it is NotCounted;
//     a pod left out keeps its finalizer.
//   - len(Recording.Uncounted.Succeeded)+len(Recording.Uncounted.Failed)+
//     len(NewSucceededIndexes) is at most the limit unless the input lists were
//     already above it; Record never adds to them when they are full.
//   - Settlement.Succeeded+len(Settlement.Uncounted.Succeeded) equals the number of
//     input succeeded UIDs after repair (likewise for failed): Settle moves UIDs
//     into counters, it never drops one.
//   - Nothing here mutates its inputs except [EnsureOnPod] and
//     [Settlement.ApplyTo], which say so. Nothing reads the clock.
//
// # Cost
//
// Has, EnsureOnPod and DecideOrphan are O(finalizers + owner references) and do not
// allocate (EnsureOnPod allocates one slice when it adds). RemovalPatch makes one
// allocation, its result. Record is O(pods + uncounted) with one map of that size;
// Settle is O(pods + uncounted) with one map of the uncounted size, and returns at
// once when nothing is uncounted. Record builds one slice of plain entries from the
// finished pods: the price of the conversion over the plain package. See the
// benchmarks for figures.
//
// # Concurrency
//
// All functions are pure and safe for concurrent use on inputs that nobody mutates.
//
// # Differences from upstream
//
//   - RemovalPatch carries the pod's UID as a precondition (as the garbage
//     collector's owner-reference patches do), so it cannot strip the finalizer of
//     a pod recreated under the same name. Upstream sends the bare patch.
//   - The limit: upstream walks pods until the lists (plus new indexes) reach 500,
//     processes the pod that reaches it, then stops walking altogether, so even pods
//     that need no new entry wait, and the sync counts as limited even when nothing
//     was left out. Record leaves out only the pods that would need a new entry,
//     keeps removing finalizers of pods already recorded and of NotCounted pods (so a
//     full ledger always drains), and sets LimitReached only when a pod was really
//     left out. The limit is configurable; 0 means 500.
//   - Corrupted ledgers: upstream counts a UID listed twice, or in both lists, once
//     per occurrence. Record and Settle keep it once (in failed when in both) and
//     report it.
//   - A repeated succeeded index costs one entry, not one per pod.
//   - Upstream sorts Indexed pods by index before walking them; Record walks in the
//     caller's order (sort before calling to fill low indexes first) and returns
//     NewSucceededIndexes sorted.
//   - DecideOrphan takes the name of the deciding controller instead of assuming
//     kubernetes.io/job-controller, so an external controller (spec.managedBy) can
//     clean orphans with the same rules and never touches another controller's pods.
package finalizers
