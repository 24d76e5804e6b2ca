// Package controllerruntime wires a jobkit controller of any owner kind onto a
// controller-runtime manager in one call: Setup. The caller gives the owner's Go
// type and its conversions (Type: New, Workload, SetStatus, ManagedBy) and the
// Reconciler's configuration; reconcile.JobType is the batch/v1 Job's, so a Job controller
// is the same call:
//
//	_, err := controllerruntime.Setup(mgr, controllerruntime.Options[*batchv1.Job]{
//		Type:   reconcile.JobType,
//		Config: reconcile.Config{Name: "example.com/job-controller"},
//	})
//
// # What Setup registers
//
//   - the field index OwnerUIDIndex of pods by the UID of their controller, once
//     per manager (of Jobs too for groups of child Jobs, and not of pods for a
//     kind of such groups only: see below);
//   - an index of its own on the store of the manager's pod informer (by
//     namespace and controller UID), once per informer: a sync lists an owner's
//     pods as the informer's own objects, never copied, and the Reconciler runs
//     with Config.ImmutablePods, so that each plan reads only the pods that are
//     new objects since the owner's last sync (plan.FactCache; at 100,000 pods
//     about half the CPU of a plan). A cache whose pod informer does not expose
//     its store (one over several namespaces, a fake) gets the pods from List,
//     as copies, and Config.ImmutablePods is false; NewController always does
//     so;
//   - a controller named after the kind: the owners whose spec.managedBy is
//     Config.Name (plan.Workload.HandledBy) are synced by reconcile.Reconciler.Sync
//     from the manager's cache; owner updates go through
//     Reconciler.ObserveOwnerEvent (a status-only update, such as the controller's
//     own write, is synced after the batch period); pod events go through
//     Reconciler.ObservePodEvent before the owners they name are queued;
//   - an orphan worker that removes the tracking finalizer of pods whose owner is
//     gone, replaced or finished (Reconciler.CleanOrphan, which confirms an owner
//     missing from the cache with an uncached read through the manager's
//     APIReader, Config.ReadOwner);
//   - events.k8s.io/v1 Events on the manager's connection, reported as Config.Name;
//   - the Prometheus metrics of package metrics, registered with
//     controller-runtime's registry and so served by the manager's metrics server:
//     job_controller_* for batch/v1 Jobs, with upstream's names, and
//     <kind>_controller_* for another kind (trainingjob_controller_*); package
//     securemetrics serves them with authentication and authorization;
//   - the requeue backoff of an owner whose sync failed on an API error:
//     Options.APIBackoff, 1s doubling to 1m by default, as the Job controller
//     (controller-runtime's default starts at 5ms).
//
// Leader election is the manager's: the controller and the orphan worker run only
// while it holds the lease.
//
// # Caching pods
//
// Setup does not configure the manager's cache, which holds every pod of the
// namespaces watched: at scale the cached pods are most of a controller's memory.
// Create the manager with reconcile.TrimPod as the pods' transform, which keeps
// only what the Reconciler reads (25.4 KB of heap a decoded running pod whole, 5.3 KB
// trimmed), and without managedFields for the other objects:
//
//	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cache.Options{
//		DefaultTransform: cache.TransformStripManagedFields(),
//		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: func(obj any) (any, error) {
//			if pod, ok := obj.(*corev1.Pod); ok {
//				return reconcile.TrimPod(pod), nil
//			}
//			return obj, nil // a tombstone
//		}}},
//	}})
//
// Every pod write of the controller is a patch of its own fields or a delete, so
// no trimmed pod is sent back; code of your own in the same manager that reads
// more of a cached pod (its images, its environment) needs a manager without the
// transform, or reads the pod from the API server. examples/controllerruntime's
// manager caches pods so.
//
// # Differences from a textbook controller-runtime controller, and why
//
//   - No Owns(&corev1.Pod{}): its handler queues the owner at once, on an informer
//     listener of its own, in no order with the handler that observes the
//     expectations; the sync it starts would find them unmet. The pod handler
//     maps a pod to its controlling owner after the observation.
//   - An owner's state is forgotten (Reconciler.Forget) only when the worker finds
//     the owner gone, never from an event handler: the worker is the only
//     goroutine syncing that key, so a late delete event cannot drop the
//     expectations of an owner recreated under the same name.
//   - Before stripping the finalizer of a pod whose owner is not in the cache, the
//     orphan worker reads the owner from the API server: pods and owners are
//     separate watches.
//   - Cache reads use client.UnsafeDisableDeepCopy: the Reconciler never modifies
//     its inputs, so a sync copies no pod.
//
// # Owners of several roles
//
// An owner type whose objects may be several roles under one owner (a launcher
// and workers, package groups/ownedpods) goes through the same Setup: Type.Roles converts
// such an object onto a ownedpods.Workload (nil for an object that is one workload,
// which Type.Workload converts), and Type.SetRolesStatus sets its status. Those
// owners are synced by Reconciler.SyncRoles over the cached pods that name them
// as controller, their status written through the status subresource with the
// resourceVersion precondition (a Conflict passed through as is); owner events,
// the orphan cleanup, the metrics and Config.ReadOwner see them as one
// plan.Workload (identity, UID, managedBy), presented in one place and never
// finished: a group that has finished still has pods to stop and count, which
// its own sync does (pod events keep syncing it; the orphan worker frees the
// pods of a deleted or replaced one). examples/trainingjob runs one kind with
// both shapes.
//
// # Groups of child Jobs
//
// A group whose roles run as child batch/v1 Jobs (JobSet's shape, package
// groups/childjobs) goes through the same Setup: Type.ChildJobs converts it
// onto a childjobs.Input, Type.SetChildJobsStatus sets its status. Such a
// group is synced by Reconciler.SyncChildJobs: Setup lists its Jobs from the
// cache (the field index OwnerUIDIndex on Jobs, once per manager), reads its
// headless Service (named by the subdomain, default the group's name), sets
// Input.ChildManagedBy from Options.ChildManagedBy (a jobkit Job controller,
// Setup of reconcile.JobType, may run the children in the same manager), and
// writes the status through the status subresource with the resourceVersion
// precondition, converting the group as stored back with ChildJobs. The
// controller owns Jobs and Services (their events queue the group at once);
// with Options.ClaimsAndBudgets it owns and caches the group's persistent
// volume claims and disruption budget too, and tells the sync which exist. A
// group whose spec plaingroup.Validate refuses is failed, as JobSet fails an
// invalid JobSet: a Failed condition of reason "Invalid" + the kind
// ("InvalidJobSet") with the errors, terminal state Failed, a Warning event;
// then its TTL after finishing applies. A group ChildJobs refuses (an error:
// it cannot be converted) gets only the Warning event, as Workload's refusals.
//
// A kind of such groups only (Type.ChildJobsOnly) owns no pods: Setup
// registers no pod index, no pod watch and no orphan worker; Config.Owner may
// be left zero (the kind comes from the scheme, the Finalizer is one nothing
// carries, "jobkit.dev/owns-no-pods"); the metrics are <kind>_controller_*
// with completion_mode ChildJobs; the events of child Jobs are CreateJob and
// DeleteJob; an unset managedBy names JobSet's controller
// (plaingroup.ControllerName), as the group rule reads it. A kind of several
// shapes keeps the pod watch and the orphan worker for its other owners; its
// groups own no pod, so the orphan cleanup finds none of theirs, and their
// child Jobs' events are recorded as CreatePod and DeletePod.
//
// # Adoption
//
// An owner whose Workload has a selector (a batch/v1 Job) adopts the pods without
// controller of its namespace that the selector matches, as upstream; one without
// (a custom resource, as a rule) counts only the pods whose controller reference
// has its UID.
//
// # Concurrency and cost
//
// Options.Workers owners are synced at once (one goroutine per key at a time, as
// the workqueue guarantees); event handlers run on the informers' goroutines and
// make O(1) cache reads per event (an adoptable pod lists its namespace's owners).
// A sync costs one or two indexed cache lists plus the Reconciler's work (see
// package reconcile). Package testenv starts a real API server for tests.
package controllerruntime
