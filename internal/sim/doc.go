// Package sim is a deterministic simulation of the jobkit Job controller under
// failure, in the style of FoundationDB's: one seed draws a Job, a kubelet and a
// fault schedule, runs reconcile.Reconciler against the in-memory cluster of
// reconcile/reconciletest step by step on a simulated clock, and checks after every
// step that no completion is lost or counted twice, no index gets a duplicate pod,
// no finalizer leaks and the Job finishes. A failing seed prints a one-line command
// that replays it, and Minimize shrinks its run to a short trace that replays
// without the generator: the form in which bugs become regression tests.
//
// It runs on the rig a user's tests run on: reconciletest's Driver syncs the owner
// (Driver.Sync), feeds the cache's events to the Reconciler and runs the orphan
// cleanup, and every fault of an API call is an outcome of the Cluster's one
// interceptor (FaultKind.Outcome maps a fault kind to it).
//
// It is internal: it is jobkit's own check, not an API (no user imported it). Its
// tests are the simulation runs of jobkit itself (`go test ./internal/sim -run
// TestSimulation -sim.seeds=N`, `make soak`); operator authors who want the approach
// for their own controllers read it here.
//
// # A custom owner
//
// Config.Owner (Trace.Owner in a trace) runs the drawn Job as a custom resource of
// another kind, with its own tracking finalizer: a reconciletest.Task of that kind
// (TaskKind is the tests' one), synced through reconcile.New and Sync
// with the in-memory cluster as pod client and status writer, under the same faults
// and the same invariants, plus wrong-owner. The owner draws nothing from the seed,
// so a seed makes the same Job, faults and kubelet with either owner, and the tests
// check that the two runs are the same, call for call. TestSimulation runs every
// fourth seed (those equal to 3 modulo 4) with TaskKind (-sim.owner=mixed, the
// default; job or task run every seed with one owner), so the 300-seed run and
// `make soak` cover both.
//
// # A run
//
// Config.Seed seeds a PCG source (math/rand/v2) from which every choice is drawn in
// a fixed order, so a seed always gives the same run: the same Job, the same API
// calls with the same outcomes, the same trace. There is no goroutine and no sleep:
// the Reconciler issues its calls one at a time (FinalizerRemovalParallelism 1),
// the clock is a k8s.io/utils/clock/testing fake moved by the run, and watch events
// are delivered when the run says.
//
//   - The Job: NonIndexed (sometimes without completions: a work queue) or Indexed;
//     completions and parallelism skewed small (85% under 20 pods, 12% up to 100,
//     3% up to Config.MaxPods, 300 by default); backoffLimit; backoffLimitPerIndex
//     with maxFailedIndexes; a podFailurePolicy with FailJob, FailIndex, Ignore and
//     Count rules on exit codes and the DisruptionTarget condition; a successPolicy;
//     podReplacementPolicy Failed or TerminatingOrFailed; restartPolicy OnFailure;
//     activeDeadlineSeconds; created suspended; elastic (completions = parallelism).
//   - The controller: caps on creations and uncounted entries per sync, a short
//     pod-failure backoff (1s doubling to 8s) and a 30s expectations TTL.
//   - Each step of the chaotic phase: maybe a change of the spec (parallelism,
//     elastic completions, suspend or resume), the watch events (delivered when due,
//     a few out of order, or a delete event lost), maybe a controller restart, a sync
//     (with faults in its API calls, maybe a crash in the middle), the kubelet
//     (pods run, become ready, succeed, fail with an exit code, are evicted with a
//     DisruptionTarget condition, restart containers, are deleted gracefully by
//     someone else, finish terminating), and the clock.
//   - Owners and orphans, drawn from a second PCG stream of the seed so that the
//     draws above, and every run without these actions, stay as they were: 4% of
//     the seeds delete the owner (Job or Task) at a drawn chaotic step, at once
//     (background propagation, the only one the cluster has), and then run the
//     garbage collector (Cluster.CollectGarbage) and the orphan cleanup
//     (Driver.CleanOrphans, Reconciler.CleanOrphan) at random; 12% of the Job
//     seeds (a Task has no selector: nothing to adopt or release) get orphan pods
//     from the Job's template, matching its selector, without controller
//     reference or finalizer, pending, running, succeeded or failed, with an index
//     that may be missing or out of range, and owned pods whose controller-uid
//     label is changed so that they no longer match (the controller releases
//     them). Not both in one seed: see Limits.
//   - Releases of active pods, drawn from a third PCG stream of the seed: 40% of
//     the Indexed Job seeds relabel, at a chance of 10% per step, a pending or
//     running pod of an index (VerbReleaseActive), whose replacement the
//     index's name sequence would name as it named the released pod (issue 20;
//     since issue 37 the controller that releases it knows the name is taken).
//   - Events handled in the middle of a sync's pod list (during-list), drawn from
//     a fourth PCG stream of the seed.
//   - Then a calm phase finishes the Job: no fault, every event delivered, the Job
//     resumed and given back a parallelism, every pod run to success. For a
//     deleted owner, each calm step delivers every event, runs the garbage
//     collector and the orphan cleanup, and finishes what is being deleted, until
//     its pods are all gone.
//
// # Faults
//
// Config.FaultRate is the probability that an API call fails (0.1 in the tests);
// it also scales the other kinds. The kinds (FaultKind), all counted per run:
//
//   - 500, 429 and 409 answers to any call (the call does not happen);
//   - timeout: the call happens and the caller gets a 504, its write hidden from it;
//   - partial-batch: a creation after the first of a slow-start batch fails;
//   - crash: the controller stops in the middle of a sync (the calls after a point
//     never reach the API server) and restarts;
//   - restart: the controller restarts between syncs. A restart loses everything in
//     memory (a new Reconciler with new expectations, finalizer removals and backoff
//     store) and starts a new cache, which lists everything before the first sync;
//   - delay: watch events arrive late for a while (a stale cache);
//   - reorder: an event is delivered ahead of older ones;
//   - lost-delete: a delete event never arrives; the pod is simply gone from the
//     next list;
//   - during-list: a sync that starts with events queued handles some of them
//     (25% of such syncs at 0.1, scaled; a few, or one time in four every one) in
//     the middle of its pod list (Action.DuringList, Cache.DeliverDuringList):
//     after the list's snapshot, before the controller gets it, as client-go's
//     informer updates its store and then calls the handlers. The controller's
//     expectations and pending finalizer removals have then seen changes its list
//     does not show; a sync that reads them after the list counts a pod twice
//     (testdata/regressions/event-during-list-counted-twice.json).
//
// # Invariants
//
// The reference model is built from the cluster's write log (every stored version
// of every object, in order) and shares no code with the packages it checks. It
// counts a pod by its state at the write that removes its tracking finalizer, which
// is the state the controller decided on (the removal patch carries the pod's
// resourceVersion):
//
//   - Succeeded: a success. NonIndexed succeeded is the number of such pods; Indexed
//     succeeded is the number of distinct indexes below completions with one (an
//     index that has already failed stays failed), an index being forgotten when a
//     status is written under lower completions (the documented elastic trim);
//   - Failed: a failure, unless an Ignore rule of the pod failure policy matches it;
//     being deleted before finishing, with podReplacementPolicy not Failed: a
//     failure; still running while the Job has FailureTarget: a failure;
//   - otherwise (scale-down, suspend, the success criteria met, no valid index): not
//     counted.
//
// Checked at every write, every step and the end (Invariant):
//
//   - count: a pod whose finalizer goes is in the uncounted list of its outcome (or,
//     Indexed, its index in completedIndexes), a pod not to count is in neither;
//     each status write moves exactly the UIDs leaving the uncounted lists into the
//     counters, each as the model says; a quiet Job (nothing uncounted, no finished
//     pod with the finalizer) has succeeded, failed, completedIndexes and
//     failedIndexes equal to the model; succeeded equals the indexes in
//     completedIndexes;
//   - counted-twice: a UID never enters an uncounted list after it was counted;
//   - record-first: a pod loses its finalizer only once recorded, a UID is counted
//     only once its pod lost the finalizer, an index fails in failedIndexes before
//     the finalizer of its last failure goes;
//   - backwards: failed, completedIndexes and failedIndexes never go back, nor
//     succeeded except by the elastic trim;
//   - invalid-status: the API server (jobstatus.ValidateUpdate, in the cluster)
//     accepts every status write;
//   - succeeded-index-created: no pod is created for an index in completedIndexes;
//   - duplicate-index and over-parallelism: two active pods for one index, or more
//     active pods than parallelism (0 when suspended), only within three syncs after
//     a fault that can hide the controller's own writes (timeout, crash, restart,
//     delay, reorder, lost-delete), a change of the spec, an orphan, a relabelled
//     pod or the owner's deletion; only syncs that saw every event and met no fault
//     count. A work queue with a success keeps what runs (as upstream);
//   - wrong-owner: a pod created for the owner has a controller reference to
//     another kind (group and kind), or, for a custom owner, carries the batch/v1
//     Job's tracking finalizer;
//   - adoption: an adopted pod gets the tracking finalizer in the adopting write,
//     matches the selector, is not being deleted, and its owner still exists. It
//     is then counted like a pod the controller created, by the same rules
//     (succeeded, failed, indexes), except that it may bring an index already
//     completed, and the failure count of its index becomes uncertain (an orphan
//     carries none);
//   - released: the write that removes the controller reference removes the
//     tracking finalizer too; a released pod is not counted, unless the status had
//     recorded it before (in an uncounted list, or its success in
//     completedIndexes), and then once, as recorded; it never enters an uncounted
//     list after its release;
//   - two-live-pods: no pod is created for an index that holds a live (active)
//     pod of the owner, whatever the faults: a creation under a name the
//     controller derived is refused when its earlier pod exists, and a refused
//     name is read back before another is tried (an adopted orphan may still join
//     an index's pod: the controller then deletes one);
//   - late-replacement: an index that holds no live pod of the owner has its
//     creation refused with AlreadyExists in fewer than three syncs: a name held
//     by a pod that is not the owner's (released, foreign) is given up in the sync
//     that learns it, or the next (the stall of issue 20, which waited
//     UncertainCreationTimeout; TestLateReplacementCaught shows the invariant
//     catches it);
//   - created-after-delete: no pod is created for a deleted owner, except by a sync
//     whose cache still showed it (a stale cache, as upstream; the garbage
//     collector removes such a pod). Once deleted, nothing is counted any more:
//     the count and quiet checks stop, and the invariants above cover the status
//     written before;
//   - at the end: a terminal condition (not-finished), no pod with the tracking
//     finalizer (finalizer-left), nothing uncounted (uncounted-left), and the quiet
//     check; for a deleted owner, no pod of it left (not-finished) and no pod in
//     the namespace with its controller reference and tracking finalizer
//     (finalizer-left).
//
// A run stops at its first violation.
//
// # Groups of child Jobs
//
// RunChildJobs runs, from the seed on a stream of its own, a group of kind
// GroupKind whose roles run as child Jobs (package groups/childjobs: a leader
// and 1 or 2 replicas of Indexed workers of 1 to 4 pods, backoffLimit 0 or 1,
// maxRestarts 0 to 3, Recreate or BlockingRecreate) through
// Reconciler.SyncChildJobs on reconciletest's Store, its children run by the
// Store's Job controller. Its chaotic phase has the call faults (500, 429, 409,
// timeout) on the controllers' calls and a kubelet that fails one pod in six;
// its calm phase succeeds every pod. Checked after every step: the restart
// counters never go back, a terminal state never changes, restartsCountTowardsMax
// stays at most maxRestarts (InvGroupBackwards, InvGroupRestarts); at the end the
// group has finished (InvGroupNotFinished), no child of an old attempt runs, a
// Completed group's children have finished (InvGroupOutcome), and no pod keeps
// the Job tracking finalizer (InvFinalizerLeft). The group's writes to its child
// Jobs are not faulted yet (the Store makes them as administrative writes).
//
// # Owners of two roles
//
// RunRoles runs, from the seed on a stream of its own, an owner of several roles
// (package groups/ownedpods) of kind RolesKind through Reconciler.SyncRoles, on
// reconciletest's Store (of Runs) and Driver: a launcher (1 pod, backoffLimit 0 to 2,
// dependsOn the workers Ready) and Indexed workers (1 to 5, backoffLimitPerIndex 0
// to 2), success Any over the launcher, a group restart on a failed role up to
// maxRestarts 0 to 3 (Recreate or BlockingRecreate), and in half the seeds a
// FailJobSet rule on a worker's exit code 42. Its chaotic phase has the call
// faults (500, 429, 409, timeout), crashes, restarts, late, reordered and lost
// delete events, and a kubelet that runs, readies, succeeds, fails and evicts;
// its calm phase delivers everything and succeeds the launcher (the workers too
// after 30 steps). Checked after every sync, from the ledger entries that leave
// a role's uncountedTerminatedPods (or its completedIndexes): each pod counted at
// most once, the attempt's counters and the role's totals grow by exactly the pods
// counted (count, counted-twice), nothing decreases (backwards), only pods of the
// role's current attempt enter its ledger and a role advances with nothing
// uncounted (old-attempt-counted), a finished pod loses its finalizer only once
// recorded (record-first), at most one status write per sync (status-writes), no
// refused write (invalid-status), and after three clean syncs no index with two
// live pods of one attempt (duplicate-index); at the end, a terminal state with
// nothing uncounted, no finalizer and no pod running (not-finished,
// uncounted-left, finalizer-left, running-after-finish), and totals equal to the
// pods counted. TestSimulation runs the roles owner of each of its seeds after the
// Jobs'; -sim.roleseed=N replays one. It found that a role stopped by a finished
// or restarting group kept a failed worker's finalizer for a replacement it never
// creates (roles now plans a stopping role as being deleted); seeds 10, 26, 31,
// 110 and 232 at 0.1 broke finalizer-left before that fix.
//
// # Groups restarted in place
//
// One seed in three of each group run (from a stream of its own, so the other
// seeds draw as before) runs its group under restartStrategy InPlaceRestart,
// with the strategy's template rules (no backoff limit, podReplacementPolicy
// Failed, restartPolicy OnFailure; the roles owner loses its FailJobSet rule,
// which a pod failure policy would need) and maxRestarts 2 to 5. Agents are
// played per pod as JobSet's behaves: a container that (re)starts reports the
// attempt after the group's current one, a pod at or below the group's
// previous attempt restarts its containers in place, a pod on the current
// attempt runs its worker; in the chaotic phase each agent acts at a chance
// of 0.6 per step (its lag), workers crash (their containers restart in place)
// and pods fail as a whole or are evicted (their role or Job replaces them),
// and a pod whose worker runs succeeds now and then (a worker of a roles
// owner), even while the others restart in place: a succeeded pod reports no
// attempt and is no longer expected (plaingroup.PodAttempt.Succeeded), so it
// holds no barrier; the calm phase lets every agent act and succeeds each pod
// once its own barrier lifted, never before. Checked at
// every step: no pod works on one attempt beside a pod working on another
// (in-place-barrier: a pod of an old attempt running beside the new one past
// the barrier; a pod leaving the group's size, of a child scaled away or an
// index resized away, is left out: it holds no barrier and runs until it is
// stopped); the group's attempts never go back, the current one moves by
// one at most (a restart counted once) and the previous one stays at or below
// it (in-place-attempts); and every invariant above (nothing left behind at
// the end: no child or pod of an old attempt running, no finalizer). Before
// succeeded pods were left out of the barrier, seeds such as 249, 255-259,
// 268, 276, 285, 288 and 296 (43 of the first 300) of the child-Jobs groups at 0.2
// never finished, and 24 of the 94 roles owners restarted in place among the
// first 300 seeds.
//
// # Groups scaled and placed exclusively
//
// From another stream of its own, one child-Jobs seed in two changes its
// workers' size once or twice in the first chaotic steps, as a user's update
// of the running group (replicas 1 to 3 up or down, and in one change in two
// the Indexed workers' parallelism = completions 1 to 4; a change after the
// group finished is not made, as the API refuses it), its pods held running
// one step in two meanwhile; and one seed in two places its children
// exclusively (JobSet's exclusive-topology annotation over a rack label of 6
// domains), its pending pods bound by a scheduler that honours their
// required pod affinity and anti-affinity (a pod without them lands at
// random; a pod no domain fits stays Pending). Both mix with the in-place
// seeds. Checked at every step: no domain holds the pods, not finished, of
// two child Jobs (exclusive-placement); at the end, no child beyond its
// role's replicas is left, and a Completed group has one completed child of
// its current attempt per index of its last size, as many succeeded and none
// active in its role status and no more per-index counters than replicas
// (group-size). TestGroupShapes runs 40 seeds at fault rate 0.2 (each shape
// covered); -sim.shapeseeds=N runs more. The node-selector strategy (nodes
// labelled per child beforehand) is not simulated.
//
// # Owners of roles resized
//
// From a stream of its own, one roles seed in two changes its workers' pod
// count (parallelism = completions, 1 to 5) once or twice in the first
// chaotic steps, as a user's update of the running owner (none after it
// finished), mixed with the in-place seeds. The model knows an elastic
// shrink, as a Job's: the completed indexes beyond the new size leave the
// role's completedIndexes and its attempt's succeeded counter (its totals
// keep them: they never go back), and a worker at or beyond the size is
// removed without being recorded (record-first leaves it out); every other
// invariant holds as for any roles run. TestRoleResizes runs 40 roles seeds
// at 0.2; -sim.roleresizeseeds=N runs more (1000: 493 resized, 160 of them
// restarted in place, 0 violations). The violations found before the model
// knew the shrink were all of the model (record-first, completedIndexes
// going back, the attempt's succeeded counter falling), none a bug of
// groups/ownedpods.
//
// # Limits
//
// The simulated kubelet ends a pod being deleted only as Failed (exit code 137): a
// pod that succeeds after its deletion started would count either way depending on
// who looked first, and the model would have to guess. The failure count of an
// index lives in the annotations of its pods (as upstream); when scale-down or
// suspend removes a pod of an index that had failed, or two pods of one index
// overlap after a hidden creation, the count may restart, and the model then only
// checks that a failed index has failed at least once. When an elastic scale-down
// takes away the index of a pod that failed before its finalizer went, the model
// accepts the failure counted or not: whether the controller recorded it while the
// index was still valid is a race. A pod that is no failure by its state when its
// finalizer goes (a success, a failure an Ignore rule matches) is not counted, even
// when it was recorded before (as plan documents). There is one Job per run and no concurrency
// inside the controller: those have their own tests in package reconcile.
//
// Orphans and the owner's deletion may come in one seed. The controller reads its
// owner from the cluster before it adopts (reconcile.Config.ReadOwner, as upstream
// reads the Job again), so a sync from a cache that has not yet seen the deletion
// adopts nothing for the deleted owner; without that read it would, and the
// garbage collector would then delete the pods (the adoption invariant catches
// it). The orphans are not moved by the kubelet before their adoption, and are not
// offered to the orphan cleanup with faults (no API call outside a sync gets one).
//
// # Traces
//
// A Trace is a run written out: the Job (and its owner kind when it is not a
// batch/v1 Job), the controller settings and every action
// (kubelet moves by pod creation ordinal, event deliveries, spec changes, restarts,
// syncs with the faults of their calls, clock steps, and the owner's deletion,
// garbage collector and orphan cleanup passes, orphans with their phase and index,
// relabelled pods). Replay runs it without the
// generator; when it ends before the Job has finished, Replay finishes it with the
// calm phase and checks the end. ReplayLog also describes every action and sync (the
// Job as cached, the plan, the API calls), which is how a failing trace is read.
// Minimize removes actions and faults while the same invariant still breaks. The regression traces in testdata/regressions are such
// minimised traces, one per bug the simulator found.
//
// # Cost and concurrency
//
// A run is single-threaded and costs about what its syncs cost (a few milliseconds
// for most Jobs, up to a second for the largest); the model adds O(pods) per step.
// Runs share nothing: Run and Replay are safe to call from several goroutines,
// which is how the tests use both cores.
package sim
