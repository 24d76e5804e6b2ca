// Package reconciletest is an in-memory Kubernetes API for tests of Job controllers
// and of controllers of custom resources built on jobkit: a Cluster of Jobs, Pods
// and, optionally, Tasks of a custom owner kind, implementing reconcile.Client and
// reconcile.StatusWriter; an informer-like Cache fed by watch events that the test
// delivers; a simulated Kubelet; fault injection; a Driver that syncs an owner step
// by step until it finishes; a Recorder of events and metrics; RunLatency, which
// measures a Job's time to Complete in units of a per-call latency; and
// RunClientConformance, which checks any reconcile.Client against the API server's
// behaviour. It is for our tests, for operator authors' tests and for a
// deterministic fault simulator built on it: every simulation of this module runs
// on it (the fault simulator, RunLatency, reconcile's chaos test, plan's multi-step
// scenarios and finalizers' ledger property test), so a fault model is written once.
//
// # Determinism
//
// Nothing happens on its own. The clock is a fake clock (Options.Clock, or one at
// 2026-01-01T00:00:00Z) moved only by the test or the Driver; generated names come from a
// random source seeded by Options.Seed; UIDs and resourceVersions are counters;
// watch events wait in a queue until the test delivers them; the Kubelet acts only
// when told or during Kubelet.Step, in pod creation order. With
// reconcile.Config.FinalizerRemovalParallelism set to 1, a Reconciler issues its calls
// in plan order, so one seed and one script give the same run call for call.
//
// # Owners of another kind
//
// A controller whose pods belong to its own resource (a TrainingJob, a CI run) is
// tested against a Cluster created with Options.Owner set to that kind: the
// Cluster then also holds Tasks, a custom resource of that apiVersion and kind with
// a spec in Job terms and a batchv1.JobStatus, as a CRD embedding them would have. Tasks are created (CreateTask, with a Job's API
// defaults but no generated selector), updated (UpdateTask), deleted (DeleteTask),
// versioned and watched (Cache.Task, Cache.OnTaskEvent) like Jobs; their status
// subresource (UpdateTaskStatus, call log operation OpUpdateStatus, faults apply)
// checks the resourceVersion and UID preconditions and validates the status as the
// API server validates a Job's (jobstatus.ValidateUpdate). CollectGarbage follows
// controller references to Jobs and to the Cluster's kind, by UID, and leaves pods
// of any other kind alone.
//
// The Cluster is the Reconciler's pod client and StatusWriter (WriteStatus takes a
// Workload whose Object is a *Task or a *batchv1.Job); Task.Workload converts a Task,
// Cache.OwnerPods lists its pods and Cache.TaskOwner gives its facts to
// Reconciler.ObservePodEvent and CleanOrphan:
//
//	c := reconciletest.NewCluster(reconciletest.Options{Owner: kind})
//	r, _ := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, c)
//	job := reconciletest.NewJob("default", "train", 4, 2) // its spec, for the Task
//	task := &reconciletest.Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec}
//	task.Spec.ManagedBy = ptr.To(name)
//	c.CreateTask(task)
//	rr, err := reconciletest.NewDriver(c, r).Run(ctx, "default", "train", 0) // rr.Task
//
// A controller of its own Go type keeps its owners in a Store of that type: NewStore
// takes the owner type's reconcile.Type (the one the controller-runtime
// integration reads in production) and returns a Cluster whose Options.Owners is
// the Store. The Cluster then holds no Tasks; the Driver syncs what the Store
// holds in its shape (Store.SyncFunc: Reconciler.Sync for a Job-shaped owner,
// Reconciler.SyncRoles for an owner of several roles, package groups/ownedpods),
// feeds the pod events to the Reconciler with the facts production reads
// (reconcile.Type.Owner: an owner of roles is never finished), runs the orphan
// cleanup with them, and stops at Store.DoneFunc; CollectGarbage asks the Store
// before it deletes a pod of that kind. The Store's status subresource is in the
// call log and takes faults; it is the Reconciler's StatusWriter for Job-shaped
// owners, and Store.RolesWriter is SyncRoles'. Run and RunType are the rig's own
// owner of roles, for tests with no type of their own. A test that needs only a
// lookup sets Options.Owners itself.
//
// The Kubelet, event latency, reordering, lost events and faults work unchanged. A
// Driver of a Cluster with a custom Owner syncs Tasks (Sync) and stops when
// DoneTask holds; Driver.CleanOrphans runs the orphan cleanup, for tests that
// delete an owner while its pods run. A controller that is not a plain Reconciler
// (one that converts its own type) plugs into the Driver with SyncFunc and
// DoneFunc.
//
// # What is simulated
//
//   - Objects: Jobs, Pods and Tasks, with UIDs, numeric resourceVersions (one counter for
//     the whole cluster, as etcd revisions), generation for Jobs, generateName, and
//     timestamps at whole seconds from the clock. Stored objects are never modified
//     in place; every write stores a new copy.
//   - Job creation applies the API defaults and the generated selector and template
//     labels (batch.kubernetes.io/controller-uid, job-name).
//   - Job status writes: resourceVersion and UID preconditions (Conflict), the API
//     server's status rules (jobstatus.ValidateUpdate, Invalid), spec changes ignored.
//   - Pod deletion: UID precondition (Conflict); pods that never ran or have finished
//     go at once (grace period 0), others get a deletionTimestamp of now plus their
//     grace period and go when the Kubelet finishes them; finalizers keep a pod, with
//     its deletionTimestamp, until removed; no finalizer may be added to a pod being
//     deleted.
//   - Pod patches: strategic merge patches (apimachinery's strategicpatch) of labels,
//     annotations, owner references and finalizers; metadata.uid, name and namespace
//     are immutable (Invalid, so a "uid" in a patch works as a precondition); a
//     resourceVersion in the patch is a precondition (Conflict); a no-op patch writes
//     nothing.
//   - A namespace being deleted (TerminateNamespace): creations fail with the
//     NamespaceTerminating cause.
//   - The Cache: a watch per object kind with per-object ordering; events delivered
//     all at once, n at a time, when due (SetEventLatency), one chosen event at a time
//     (reordering across objects), dropped (the cache takes the change silently,
//     as a relist would), or in the middle of the next pod list (DeliverDuringList:
//     handled after the list's snapshot, before the sync gets it, as an informer's
//     handlers run while a lister's caller holds what it read); Reset models a new
//     informer after a restart.
//   - The Kubelet: Pending → Running → Ready → Succeeded/Failed, evictions with a
//     DisruptionTarget condition, container restarts, the end of graceful deletions.
//   - Faults and latency per call (Fault, FailNth, SetInterceptor): any error, for
//     the nth matching call or several, optionally after the write happened (a
//     timeout whose answer was lost); and how long a call takes (Outcome.Delay, in a
//     testing/synctest bubble), so that one interceptor models both. RunLatency is
//     such an interceptor, the fault simulator of this module another (its
//     outcomes, written once, serve reconcile's chaos test and finalizers' ledger
//     property test too). The call log (Calls) records every reconcile.Client call
//     with its outcome; OnWrite sees every change as it is written.
//
// # What is not simulated
//
// Like controller-runtime's fake client, this is not an API server. There is no
// admission (no webhooks, quotas, LimitRanges, pod security), no validation of Job
// specs or pod specs beyond what is listed above, no scheduler (the Kubelet binds
// pods to one node), no garbage collector (CollectGarbage runs one pass on demand;
// deleting a Job or a Task leaves its pods), no foreground deletion or
// deletionTimestamp on Jobs and Tasks (they go at once), no CRD schema, no pod garbage collector for finished pods, no
// namespace lifecycle, no server-side apply, no JSON or merge patches (415), no
// field selectors, watch bookmarks, resourceVersion-based lists or "too old"
// resourceVersions, no managedFields, and no real concurrency between the API and
// the kubelet: everything happens in the order the test calls it.
//
// # Concurrency and cost
//
// All types are safe for concurrent use; one mutex guards the cluster. Event handlers
// and Kubelet scripts run outside it, on the caller's goroutine. Write hooks
// (OnWrite), faults' Match and interceptors run under it and must not call the
// Cluster. Writes cost a deep copy of the object (patches a JSON round trip of the
// pod's metadata); cached lists sort their result, O(n log n) in the pods of the
// namespace.
package reconciletest
