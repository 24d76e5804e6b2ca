// Package reconcile runs the sync of an owner of pods (a batch/v1 Job, or a custom
// resource) against a small client interface, as the Job controller of Kubernetes
// 1.37 does: it checks the expectations, computes the pure decision of package plan,
// and executes it in the crash-safe order. It also maps informer events to the
// owners to sync and the expectations they fulfil, and cleans the tracking finalizer
// of orphan pods. It depends on no client library: an adapter over client-go or
// controller-runtime implements Client (four calls) and runs
// reconciletest.RunClientConformance to prove it behaves as the API server.
//
// # Any owner
//
// The pods' owner is a parameter (Config.Owner, an owner.Kind: group, version, kind
// and tracking finalizer; batch/v1 Jobs by default): the controller reference of the
// pods created and adopted, the finalizer that tracks them and the pod events that
// concern an owner are that kind's. Ownership is by controller-reference UID: a pod
// is an owner's when its controller reference has the owner's UID, whatever else it
// says; this is the contract between jobkit and the caller's pod lister.
//
// One door serves every owner: New(cfg, pods, status) and Sync(ctx, w, list); an
// owner of several roles has SyncRoles beside it (see "Several roles"), a group of
// child Jobs SyncChildJobs (see "Child Jobs"). The other
// methods of a Reconciler are its event handlers (ObservePodEvent,
// ObserveOwnerEvent), the orphan cleanup (CleanOrphan) and Forget. It has no getter
// of its configuration: Config.WithDefaults returns the Config New uses, the
// defaults stated there once, so a caller that reads a value in use (the Clock, the
// stores a test inspects) fills it in first and gives the result to New.
//
//   - batch/v1 Jobs: New(cfg, client, JobStatusWriter(client)); each Job is
//     converted by plan.JobWorkload, the one conversion of a Job.
//   - any other owner: the controller converts its object into a plan.Workload
//     (identity, a plan.Spec in Job terms, its status as a batchv1.JobStatus,
//     resourceVersion, the object itself) and writes the status back in its
//     StatusWriter, the one call that knows its type. Events are recorded on
//     Workload.Object. The orphan cleanup takes the owner's
//     facts (CleanOrphan), owner events go through ObserveOwnerEvent.
//     examples/trainingjob is a complete controller of this kind.
//
// # One sync
//
// Reconciler.Sync(ctx, w, list), with w converted from the owner as read from the
// caller's cache:
//
//  1. a new UID under a known key means the Job was recreated: its state is dropped;
//  2. a Job older than the last status this Reconciler wrote (resourceVersions
//     compared as integers when both parse, else by equality with the versions seen
//     before the write) is replaced by the Job that write returned, spec included:
//     the newest known, so the sync need not wait one event lag for the cache;
//  3. the expectations are checked, then the pods listed, then plan.Compute runs;
//     a deletion expected by UID whose pod is no longer listed, or is listed with
//     a deletionTimestamp, counts as observed (its event was lost);
//  4. adopt and release patches; a pod found gone stops the sync (Report.Retry).
//     Before adopting, Config.ReadOwner (when set) reads the owner from the API
//     server: gone, recreated or being deleted stops the sync, adopting nothing.
//     A release removes the controller reference and the tracking finalizer in one
//     patch; adoptions and releases carry the cached resourceVersion as a
//     precondition: a Conflict (the pod changed) stops the sync too. Later writes of the sync to an adopted pod carry
//     the resourceVersion its adoption returned, unless something besides the
//     adoption changed the pod (then the cached one, and a Conflict: the pod is
//     looked at again);
//  5. plan.RecordStatus is written, when set, before any finalizer goes;
//  6. the tracking finalizers are removed, at most FinalizerRemovalParallelism at a
//     time; each UID is recorded as a pending removal before its patch and dropped
//     again if the patch fails; NotFound, and Invalid on metadata.uid (the pod's UID
//     precondition: a new pod took the name), count as removed. A pod not in phase
//     Succeeded or Failed (one being deleted) gets its cached resourceVersion as a
//     second precondition, so that it is counted by the state the plan saw (a
//     Conflict on it, the pod having changed since, does not fail the sync: the
//     finalizer stays, Report.Retry asks for another sync soon, and that one decides
//     from the changed pod; upstream sends no such precondition); a
//     finished pod needs none (it stays finished, and a late write to it, a
//     kubelet's last status update, would only turn the removal into a Conflict);
//  7. plan.Settle with the accepted removals gives the status to write (counters,
//     terminal condition); the backoff record is stored once the newly finished pods
//     are in the API;
//  8. pods are deleted (the finalizer first when the plan says so, so that a
//     scale-down is not a failure), each deletion expected by UID before the call;
//     that finalizer removal carries the cached resourceVersion as a precondition,
//     and a Conflict (the pod changed, perhaps finished) skips the pod and requeues;
//     when it fails in a way that leaves unknown whether it was applied (a timeout),
//     the removal stays pending, so the pod is neither recorded nor counted, until
//     the cache shows the pod with its finalizer at a newer resourceVersion (the
//     patch was not applied) or the expectations TTL has passed;
//  9. pods are created in slow-start batches that double after each batch without
//     failure, starting at the size of the Job's last such batch (1 at first) and
//     halved after a failed one; each creation is expected before its call and
//     given back when it surely failed. A timeout leaves an unnamed pod expected
//     (it may exist) for UncertainCreationTimeout; a pod the plan named (an index's
//     pod) is read back under its name (PodClient.GetPod): stored, it stays
//     expected until its event (at most UncertainCreationTimeout); not stored (or
//     the read failed), it is given back at once, since the next sync sends it
//     again under the same name. A creation of a named pod refused with
//     AlreadyExists reads the pod holding the name the same way: the owner's own
//     pod (stored by an earlier request, not in the cache yet) is the pod the plan
//     counted, kept expected likewise, and nothing is created; a pod that is not the
//     owner's (released, another owner's, foreign) gives its name up at once: the
//     creation goes on in the same sync under the next name of the index's
//     sequence (indexes.NextPodName), and the name goes to later plans as
//     plan.Input.TakenPodNames. The sequence follows from the refused name, so a
//     restart that forgets the taken names walks it again and finds its own pod
//     before creating a second one. When the read fails, the name is given up only
//     after UncertainCreationTimeout without a listed pod of that name. After a
//     batch with a failure the creations not tried are dropped. A failed creation never fails the
//     Job: FailedCreate event, error returned so that the caller requeues with rate
//     limiting. A namespace being deleted stops the creations without error.
//
// A Conflict on a status write ends the sync with Report.Retry, a RequeueAfter of at
// most Config.ConflictRequeue and no error; other errors are returned wrapped (errors.Is and apierrors predicates see through them),
// after every independent call of the sync was tried.
//
// # Every shape through one body
//
// Sync (an owner in Job terms), SyncRoles (an owner of several roles that owns
// their pods) and SyncChildJobs (a group whose roles run as child Jobs) are three
// doors onto one sync body: the owner's UID noted (a new UID under a known key
// forgets it), a cached owner older than the last status write replaced by the
// owner that write returned (or the sync skipped when that owner is another one),
// then the shape's decision and its execution in the order its Plan documents,
// and one sync metric. What differs is only what a shape decides and writes.
//
// # Several roles
//
// An owner of several roles whose pods it owns directly (a launcher and workers,
// no child Jobs; package groups/ownedpods) has one door too: Reconciler.SyncRoles(ctx, w,
// list, status), on the same Reconciler as Sync (Config.Owner is its kind; the
// stores, the key Key(namespace, name) and Forget are shared), with a
// ownedpods.StatusWriter that writes its status. Its steps mirror Sync's: a new UID
// forgets the key; a cached owner older than the last status written is replaced by
// the owner that write returned; the expectations are checked, then the pods of
// every role listed, then ownedpods.Compute decides. The ownedpods.Plan is executed in its
// order, with at most one status write a sync (Report.StatusWrites <= 1):
//
//  1. the status, when it changed: a conflict ends the sync with Report.Retry and
//     no pod call made; another failure returns the error, with no pod call either;
//  2. the finalizer removals, exactly as step 6 of Sync (pending-removal records,
//     UID and resourceVersion preconditions, FinalizerRemovalParallelism);
//  3. the deletions, then the creations, exactly as steps 8 and 9 of Sync (the same
//     code: expectations before each call, slow-start batches, named pods read
//     back after AlreadyExists or a timeout, the next name of a refused one derived
//     from "<owner>-<role>", uncertain creations).
//
// One write is crash-safe because of what it holds: each role's status records the
// newly finished pods in its uncountedTerminatedPods and counts only pods that no
// longer carry the tracking finalizer. So it can go before the removals of the same
// sync: a crash after it loses nothing (the pods still carry their finalizer and
// are in the ledger, and the next sync removes it again), and the pods this sync
// strips are counted by the next sync's write, never twice (they leave the ledger
// in that write). The cost is that counting lags one sync: a pod is counted in the
// write after the one that recorded it, and a role finishes one sync after its last
// removal. Sync writes twice instead (record, then settle) to count in the same
// sync.
//
// Events of the plan are recorded once its status is in the API (written, or
// unchanged). Metrics use completion_mode "Roles": job_pods_finished_total from the
// increase of the roles' totals (RoleStatus.Succeeded and Failed) in the write,
// jobs_finished_total once when the group's Completed or Failed condition is
// written. Report.Plan stays nil (it is a Job's plan).
//
// # Child Jobs
//
// A group whose roles run as child batch/v1 Jobs (JobSet's shape; package
// groups/childjobs) has its door beside SyncRoles: Reconciler.SyncChildJobs(ctx,
// in, jobs, status), with a ChildJobClient for the Jobs, the Service and the
// group's deletion and a childjobs.StatusWriter for the status (New may then be
// given a nil pod client and status writer). Its steps: a new UID forgets the key;
// a cached group older than the last status written is replaced by the group that
// write returned (with the cache's children); a sync whose cache does not show the
// children the key's syncs created (a name not listed) or deleted (a UID listed
// without deletionTimestamp) is skipped, for at most UncertainCreationTimeout after
// each call; then childjobs.Compute decides and the childjobs.Plan is executed in
// its order: the status (a conflict ends the sync with Report.Retry and no other
// call), the deletions (foreground, UID precondition), the Service, suspend and
// resume, the creations, the events. Metrics use completion_mode "ChildJobs"
// (JobSync, and JobFinished when the written status finishes the group). The
// calls go one at a time, in plan order: a group has tens of children, not
// thousands of pods. A steady sync costs childjobs.Compute's and nothing more
// (BenchmarkSyncChildJobsSteady, a shared two-core machine: 10 children 5 µs,
// 3 KB, 18 allocations; 1,000 children 0.3 ms, 142 KB, 18 allocations).
// Type.ChildJobs and Type.SetChildJobsStatus describe such an owner type, so
// that controllerruntime.Setup serves it with the one call it makes for the
// other shapes.
//
// # Invariants
//
//   - No finalizer is removed before the status that records its pod was written,
//     and a pod is counted only in the write that removes it from the uncounted
//     lists: a crash at any point neither loses nor double-counts a pod.
//   - Every create, delete and finalizer removal is expected before the call; an
//     expectation is given back only when the call surely did nothing.
//   - No index gets two live pods of the owner from its creations: an index's pod
//     has a name derived from what the cache shows of the index, and a name refused
//     with AlreadyExists is read back before the next one is tried.
//   - The status written before the creations counts them in active, as the
//     plan's creations; a pod whose name was taken is created under the next name
//     in the same sync, so it is counted once it exists. A creation that failed
//     otherwise stays counted until a later sync creates the pod or no longer
//     plans it (upstream writes after its creations and subtracts the failed ones).
//   - Inputs (Jobs and pods from the cache) are never modified.
//   - All state is in the stores of Config (expectations, finalizer removals,
//     backoff records) plus one record per Job key of the Reconciler's own (the
//     last UID, the last status write, finalizer removals and creations of unknown
//     outcome, names found taken, the slow-start batch size); Forget drops all of
//     it.
//
// # Events, logs and metrics
//
// Events (Config.Events, the signature of client-go's record.EventRecorder):
// SuccessfulCreate, FailedCreate, SuccessfulDelete, FailedDelete, InvalidJob, and the
// plan's: Suspended, Resumed, Completed, TooManySucceededPods and the failure reasons
// (BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, FailedIndexes,
// MaxFailedIndexesExceeded). The events of finishing are recorded only once the
// terminal condition is written.
//
// Logs go to Config.Logger (logr) with the key "job"; V(2) per API call, V(4) plans.
//
// Metrics go to Config.Metrics; a Prometheus implementation would register them under
// upstream's names, all prefixed job_controller_:
//
//	job_sync_duration_seconds      histogram {completion_mode, result, action}  Metrics.JobSync
//	job_syncs_total                counter   {completion_mode, result, action}  Metrics.JobSync
//	jobs_finished_total            counter   {completion_mode, result, reason}  Metrics.JobFinished
//	job_pods_finished_total        counter   {completion_mode, result}          Metrics.PodsFinished
//	pod_failures_handled_by_failure_policy_total  counter {action}              Metrics.PodFailuresHandledByPolicy
//	terminated_pods_tracking_finalizer_total      counter {event}               Metrics.TerminatedPodsTrackingFinalizer
//	job_pods_creation_total        counter   {reason, status}                   Metrics.PodsCreated
//	stale_sync_skips_total         counter                                      Metrics.StaleSyncSkipped
//
// completion_mode is NonIndexed or Indexed (Roles for SyncRoles); result is success
// or error for syncs, succeeded or failed otherwise; action is pods_created,
// pods_deleted, tracking (only status and finalizer work) or reconciling (nothing to
// do).
//
// # Event mapping
//
// MapPodEvent is pure: which owner keys a pod event concerns, when to sync them
// (after PodEventBatchPeriod), and which expectations the event fulfils.
// Reconciler.ObservePodEvent applies it to the Reconciler's stores, checking the
// owner's UID so that a pod of a deleted owner never fulfils the expectations of a
// new one with the same name; it takes the owner's facts from the caller's cache (an
// OwnerLookup of finalizers.OrphanOwner; finalizers.JobOwner presents a Job).
// Reconciler.ObserveOwnerEvent is the one rule for owner events of any kind, over
// the converted workloads: additions, spec changes (Workload.Generation) and new
// UIDs sync at once, other updates after PodEventBatchPeriod, and a deleted,
// replaced or just finished owner is forgotten (by UID) and its pods go to the
// orphan cleanup. Both tell the caller which pods need the orphan cleanup
// (CleanOrphan, with finalizers.DecideOrphan rules, which confirms a missing owner
// through Config.ReadOwner) and when orphans may be adopted (PodEventResult.Adoptable:
// the owners whose selector matches the pod).
//
// # Helpers for other controllers
//
// WaitForCacheSync waits, bounded and on an injectable clock, until a cache shows a
// resourceVersion at least as new as one just written (read-your-writes after a
// state transition). What a pod-create error means (terminal, retry, or a pod of
// its own name to adopt) is runplan.ClassifyCreateError's, which the Reconciler
// also asks about AlreadyExists; batch Jobs never fail on create errors.
//
// # Cost
//
// A sync is plan.Compute (O(n log n) in pods) plus one API call per action; the
// stores are O(1) per call. Listing stays the caller's. MapPodEvent allocates only the
// target slice and key (none for a resync). See the benchmarks for figures.
//
// # Concurrency
//
// A Reconciler is safe for concurrent use as long as each Job key is synced by one
// goroutine at a time, which a workqueue guarantees. Event handlers may run
// concurrently with syncs. Within a sync, API calls run on up to
// FinalizerRemovalParallelism goroutines; with 1 they run in plan order on the
// caller's goroutine, which makes a run against reconciletest reproducible.
//
// # Differences from upstream
//
//   - The controller names itself (Config.Name, required); only
//     "kubernetes.io/job-controller" also takes Jobs without spec.managedBy.
//   - Order: upstream creates and deletes pods before the status and finalizer work
//     of the same sync; here creations and deletions come last, after the status
//     that reflects the finished pods, as plan.Plan documents.
//   - Expectations are raised per call and deletions tracked by pod UID (see package
//     expectations), so a graceful deletion observed twice lowers its key once and a
//     batch dropped after an error has nothing to give back.
//   - A creation refused because the namespace is being deleted gives its expectation
//     back; upstream forgets to, and the Job waits for the 5-minute expiry.
//   - A creation that timed out keeps its expectation until the pod's event arrives
//     or UncertainCreationTimeout (30s) has passed. Upstream gives it back, so a pod
//     written despite the timeout can be duplicated from a cache that does not show
//     it yet, or missed by a Job that finishes meanwhile (and then left running,
//     uncounted). The pods of an Indexed Job are named by the plan
//     (indexes.PodName), not by the API server: a creation that timed out is sent
//     again at the next sync under the same name and can never give an index a
//     second pod.
//   - Finalizer removal, adoption and release patches carry the pod's UID as a
//     precondition, and their Invalid answer on metadata.uid counts as "the pod is
//     gone".
//   - The release patch (controller reference and tracking finalizer in one write,
//     as upstream) also carries the cached resourceVersion, so a release sent from a
//     stale cache cannot strip the finalizer another Job added when it adopted the
//     pod since; ReleasePatch documents why a failed or timed-out release neither
//     loses nor double-counts a pod.
//   - The adoption patch carries the cached resourceVersion too (upstream sends
//     none), so a sync from a cache that still shows a pod as the orphan it was
//     cannot adopt it again after an earlier sync counted it and removed its
//     finalizer: that would put the finalizer back and count the pod twice.
//   - Scale-down and suspend remove a pod's finalizer with the cached
//     resourceVersion as a precondition. Upstream sends the plain patch, so a pod
//     that finished after the cache showed it running loses its finalizer without
//     being counted: a lost completion (or failure). Here the patch fails with a
//     Conflict, the pod is left alone and the next sync counts it. When that patch
//     times out, upstream may later record the pod, stripped but still shown with
//     its finalizer by a stale cache, and count it as a failure if the Job fails;
//     here the removal stays pending until the cache settles the question.
//   - Finalizer removals still pending for pods no longer listed are dropped at the
//     next sync (the cache processed their deletion), so they cannot leak.
//     Deletions expected by UID are observed the same way: a delete event that
//     never arrived (a relist found the pod gone) does not hold the Job until the
//     expectations expire (5 minutes upstream, where a lost event can also stop a
//     suspended Job from deleting its last pods for that long).
//   - Read-your-writes returns Result.RequeueAfter without error (upstream returns an
//     error and relies on the rate limiter).
//   - Slow start remembers per Job the size of the last batch without failure
//     (upstream starts at one pod every sync: about 9 round trips for 500 pods).
//   - A cached Job older than the last status written is synced as written, rather
//     than skipped (upstream syncs the stale Job).
//   - A failed adoption or release stops the sync instead of syncing without the pod:
//     the plan counted it.
//   - A Job the plan cannot handle gets a Warning event InvalidJob (upstream:
//     UnknownCompletionMode) and is skipped without error.
//   - job_pods_creation_total counts each creation by its real outcome; upstream
//     counts failed creations as succeeded.
//   - The active deadline needs no timer of its own: each sync returns the remaining
//     time in Result.RequeueAfter.
package reconcile
