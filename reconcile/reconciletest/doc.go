// Package reconciletest is an in-memory Kubernetes API for tests of Job controllers
// and of controllers of custom resources built on jobkit: a Cluster of Pods and of
// owners, each kind of owner in a Store of its Go type, implementing
// reconcile.Client and reconcile.StatusWriter; an informer-like Cache fed by watch
// events that the test delivers; a simulated Kubelet; fault injection; a Driver
// that syncs an owner of any shape step by step until it is done; a Recorder of
// events and metrics; RunLatency, which measures the time to Complete of a Job, or
// of many Jobs synced by several workers, in units of a per-call latency; and
// RunClientConformance, which checks any
// reconcile.Client against the API server's behaviour. It is for our tests, for
// operator authors' tests and for a deterministic fault simulator built on it:
// every simulation of this module runs on it (the fault simulator, RunLatency,
// reconcile's chaos test, plan's multi-step scenarios and finalizers' ledger
// property test), so a fault model is written once.
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
// # Owners
//
// Owners live in Stores, one per kind, each holding objects of one Go type
// converted by its reconcile.Type, the one the controller-runtime integration
// reads in production: every Cluster holds its batch/v1 Jobs in Cluster.Jobs
// (reconcile.JobType), and NewStore returns a Cluster whose Options.Owner kind is
// held by a Store of the test's own type (a *TrainingJob with its Type), of the
// rig's Task (TaskType: a spec in Job terms and a batchv1.JobStatus, as a CRD
// embedding them would have) or of its Run (RunType: an owner of several roles).
// Every Store creates, updates, deletes and lists its owners (Create, Update,
// Delete, Get, List), versions them with the Cluster's one resourceVersion
// counter and reports every change as a watch event to the Cache, with the same
// latency, reordering and losses as pod events; its Cached, CachedList,
// CachedOwner (the reconcile.OwnerLookup of pod events and orphans) and OnEvent
// are its owners as the Cache has them. Its status subresource (WriteStatus,
// RolesWriter, and Cluster.UpdateJobStatus for Jobs) is a controller call: in the
// call log, faults apply, the UID and resourceVersion are preconditions, and the
// rules of the shape's status hold. CollectGarbage follows controller references
// to the owners of both Stores, by UID, and leaves pods of any other kind alone.
//
// A Driver drives the owners of the Store of the kind it serves, of any shape, on
// one path: its pod events and orphan cleanup read the owners' facts as
// production reads them (reconcile.Type.OrphanOwner: an owner of roles is never
// finished), its owner events go to Reconciler.ObserveOwnerEvent, each step syncs
// the cached owner in its shape (Reconciler.Sync, SyncRoles or SyncChildJobs) and
// Run stops when it is done (Store.DoneFunc):
//
//	c, tasks := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.TaskType)
//	r, _ := reconcile.New(reconcile.Config{Name: name, Owner: kind, Clock: c.Clock()}, c, c)
//	job := reconciletest.NewJob("default", "train", 4, 2) // its spec, for the Task
//	task := &reconciletest.Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec}
//	task.Spec.ManagedBy = ptr.To(name)
//	tasks.Create(task)
//	rr, err := reconciletest.NewDriver(c, r).Run(ctx, "default", "train", 0) // rr.Workload
//
// The Cluster is the Reconciler's pod client and StatusWriter for Jobs and for
// Job-shaped owners (WriteStatus passes a Workload whose Object is a
// *batchv1.Job to UpdateJobStatus and any other to the Store); Store.RolesWriter
// is SyncRoles'. Driver.CleanOrphans runs the orphan cleanup, for tests that
// delete an owner while its pods run. A controller that is not a plain Reconciler
// plugs into the Driver with SyncFunc and DoneFunc; Store.SyncFunc syncs the
// owner as stored, with no cache lag, for tests that measure the controller
// without it.
//
// # What is simulated
//
//   - Objects: Pods and owners of any type, with UIDs, numeric resourceVersions (one
//     counter for the whole cluster, as etcd revisions), generations, generateName, and
//     timestamps at whole seconds from the clock. Stored objects are never modified
//     in place; every write stores a new copy.
//   - Job creation applies the API defaults and the generated selector and template
//     labels (batch.kubernetes.io/controller-uid, job-name); a Task's, a Job's
//     defaults of its spec fields; other types are stored as given.
//   - Status writes: resourceVersion and UID preconditions (Conflict), the API
//     server's status rules (a Job's and a Job-shaped owner's: jobstatus.ValidateUpdate;
//     a group's: counters never decrease, a terminal state never changes; Invalid),
//     spec changes ignored.
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
//   - The Cache: a watch per pod and per Store with per-object ordering; events delivered
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
// deleting an owner leaves its pods), no foreground deletion or
// deletionTimestamp on owners (they go at once; a group's child Jobs are the
// exception: the Store finishes their foreground deletion), no CRD schema, no pod garbage collector for finished pods, no
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
// pod's metadata); cached lists sort their result: an owner's (OwnerPods) is
// O(n log n) in the pods it controls (the Cache indexes pods by controller UID),
// plus the orphans when it has a selector; Pods is O(n log n) in the pods of the
// namespace.
package reconciletest
