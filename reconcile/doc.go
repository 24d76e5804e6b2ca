// Package reconcile runs the sync of an owner of pods (a batch/v1 Job, or a custom
// resource) against a small client interface, as the Job controller of Kubernetes
// 1.37 does: it checks the expectations, computes the pure decision of package plan,
// and executes it in the crash-safe order. It also maps informer events to the
// owners to sync and the expectations they fulfil, and cleans the tracking finalizer
// of orphan pods. It depends on no client library: an adapter over client-go or
// controller-runtime implements Client (four calls) and runs
// reconciletest.RunClientConformance to prove it behaves as the API server.
//
// # When to use it
//
// Use it to execute plans: it is the one executor of every shape, so a controller
// converts its owner and calls it, and never executes a plan itself. The pods' owner
// is a parameter (Config.Owner, an owner.Kind: group, version, kind and tracking
// finalizer; batch/v1 Jobs by default). Ownership is by controller-reference UID: a
// pod is an owner's when its controller reference has the owner's UID, whatever else
// it says; this is the contract between jobkit and the caller's pod lister.
//
//   - batch/v1 Jobs: New(cfg, client, JobStatusWriter(client)), then Sync(ctx, w,
//     list) with w = plan.JobWorkload(job), the one conversion of a Job.
//   - any other owner in Job terms: the controller converts its object into a
//     plan.Workload (identity, a plan.Spec in Job terms, its status as a
//     batchv1.JobStatus, resourceVersion, the object itself, on which events are
//     recorded) and writes the status back in its StatusWriter, the one call that
//     knows its type. examples/trainingjob is a complete controller of this kind.
//   - an owner of several roles that owns their pods: SyncRoles, on the same
//     Reconciler (package groups/ownedpods).
//   - a group whose roles run as child Jobs: SyncChildJobs, with a ChildJobClient
//     and a childjobs.StatusWriter (package groups/childjobs).
//
// The other methods of a Reconciler are its event handlers (ObservePodEvent,
// ObserveOwnerEvent), the orphan cleanup (CleanOrphan) and Forget. It has no getter
// of its configuration: Config.WithDefaults returns the Config New uses, the
// defaults stated there once, so a caller that reads a value in use (the Clock, the
// stores a test inspects) fills it in first and gives the result to New. A Type
// describes an owner type once for all three doors, so that
// controllerruntime.Setup serves it with one call.
//
//	r, err := reconcile.New(reconcile.Config{Name: "example.com/job-controller"}, client, reconcile.JobStatusWriter(client))
//	...
//	res, err := r.Sync(ctx, plan.JobWorkload(job), listPodsOfJob) // per event or requeue
//
// # One sync
//
// A sync notes the owner's UID (a new UID under a known key forgets the key),
// replaces an owner older than the last status it wrote by the owner that write
// returned, checks the expectations, lists the pods, runs the shape's pure decision
// and executes its Plan in the order that Plan type documents (plan.Plan,
// ownedpods.Plan, childjobs.Plan). A Conflict on a status write ends the sync with
// Report.Retry and no error; other errors are returned wrapped, after every
// independent call of the sync was tried. What each step does with expectations,
// preconditions, timeouts and refused names, and why, is in docs/behaviour.md of the
// repository.
//
// MapPodEvent is pure: which owner keys a pod event concerns, when to sync them, and
// which expectations it fulfils; ObservePodEvent and ObserveOwnerEvent apply it and
// the rule for owner events to the Reconciler's stores, and say which pods need the
// orphan cleanup (CleanOrphan, with finalizers.DecideOrphan's rules).
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
// terminal condition is written. Logs go to Config.Logger (logr) with the key "job";
// V(2) per API call, V(4) plans. Metrics go to Config.Metrics under upstream's names
// (job_controller_*); each method of Metrics names its metric and labels.
//
// # Cost
//
// A sync is plan.Compute (O(n log n) in pods) plus one API call per action; the
// stores are O(1) per call. Listing stays the caller's. MapPodEvent allocates only the
// target slice and key (none for a resync). A steady SyncChildJobs costs
// childjobs.Compute's and nothing more. See the benchmarks for figures. The cache
// is the caller's too, and most of a controller's memory at scale: TrimPod, as the
// pod informer's transform, keeps of each pod only what the Reconciler reads
// (BenchmarkCachedPodHeap, each pod decoded from protobuf: 25.4 KB a pod whole, 5.3 KB trimmed). With
// Config.ImmutablePods (pods from an informer, never changed in place), each
// owner key keeps a plan.FactCache (64 to 128 bytes a pod) and a plan reads only
// the pods that are new objects since the owner's last sync.
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
// The controller names itself (Config.Name, required; only
// "kubernetes.io/job-controller" also takes Jobs without spec.managedBy), deletions
// come after the status work of a sync, and creations too unless they can go out
// beside it (nothing deleted, no condition changed), and every pod write that could
// count a pod wrongly from a stale cache carries a precondition. The whole list, each
// difference with its reason, is in docs/behaviour.md of the repository ("Differences
// of reconcile").
package reconcile
