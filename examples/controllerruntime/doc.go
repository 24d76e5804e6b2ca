// Package controllerruntime is jobkit's batch/v1 Job controller on
// controller-runtime: the same controller as package clientgo, built from a manager,
// the builder and a field index instead of shared informers and a hand-made
// workqueue. It manages the Jobs whose spec.managedBy is its name
// (DefaultManagedBy unless configured), so it runs beside kube-controller-manager
// on any cluster where spec.managedBy is honoured (the JobManagedBy feature, GA in
// Kubernetes 1.35).
//
//	mgr, _ := controllerruntime.NewManager(restConfig, controllerruntime.ManagerOptions{LeaderElection: true})
//	_, _ = controllerruntime.Setup(mgr, reconcile.Config{Name: "example.com/job-controller"}, controllerruntime.Options{})
//	_ = mgr.Start(ctx)
//
// # How it is wired
//
//   - Client adapts controller-runtime's client.Client to reconcile.Client, reading
//     a pod (GetPod) through the manager's API reader, never the cache; it passes
//     reconciletest.RunClientConformance against a real kube-apiserver.
//   - The builder: For(&batchv1.Job{}) with the ManagedBy predicate; Jobs are read
//     from the manager's cache and synced by reconcile.Reconciler.Sync, which
//     lists the pods (the OwnerUIDIndex field index, plus the selector's pods
//     without controller for adoption) only after checking the expectations.
//   - Pod events go through a handler of our own (Watches(&corev1.Pod{}, ...)) that
//     calls Reconciler.ObservePodEvent, then queues the Jobs it names after the batch
//     period, the Jobs that may adopt an orphan, and the orphans. Job updates go
//     through Reconciler.ObserveOwnerEvent, which queues status-only ones after the
//     batch period too. The Reconcile body, these handlers and the orphan cleanup
//     are examples/internal/crowner's, shared with examples/trainingjob.
//   - An orphan worker (a manager Runnable with its own rate-limited queue) removes
//     the tracking finalizer of pods whose Job is gone, replaced or finished
//     (Reconciler.CleanOrphan, which reads a Job missing from the cache from the
//     API server through Config.ReadOwner). Envtest runs no garbage collector: it is this worker
//     that frees the pods of a deleted Job.
//   - Events go to an events.k8s.io/v1 recorder on the manager's connection
//     (ManagerEventRecorder), named after the managedBy name, with EventAction as
//     the action.
//   - Metrics: upstream's job_controller_* metrics (Metrics, the implementation
//     the client-go example's command uses too), registered with
//     controller-runtime's registry (DefaultMetrics) and served by the manager;
//     Setup adds the Job informer handler that counts job_finished_indexes_total
//     and jobs_by_external_controller_total, which the Reconciler does not report.
//   - NewManager enables leader election on request (the Lease named LeaseName of
//     the managedBy name, released on shutdown), strips managedFields from the
//     cache, serves metrics only when asked, and serves /healthz (ping) and
//     /readyz (the caches have synced) at ManagerOptions.HealthProbeBindAddress.
//
// # Differences from a textbook controller-runtime controller, and why
//
//   - No Owns(&corev1.Pod{}): its handler queues the owner at once, on an informer
//     listener of its own, in no order with the handler that observes the
//     expectations; the sync it starts finds them unmet and does nothing but cost a
//     sync. The pod handler above does everything Owns does (map a pod to its
//     controlling Job) after the observation.
//   - Reconcile forgets a Job's state (Reconciler.Forget) only when the worker finds
//     the Job gone, never from an event handler: the worker is the only goroutine
//     syncing that key, so a late delete event cannot drop the expectations of a Job
//     recreated under the same name.
//   - Before stripping the finalizer of a pod whose Job is not in the cache, the
//     orphan worker reads the Job from the API server: pods and Jobs are separate
//     watches, and another controller's pod can reach the cache before its Job.
//   - Cache reads use client.UnsafeDisableDeepCopy: the Reconciler never modifies
//     its inputs, so a sync copies no pod.
//
// # Concurrency and cost
//
// Options.Workers Jobs are synced at once (one goroutine per key at a time, as the
// workqueue guarantees); event handlers run on the informers' goroutines and take
// O(1) cache reads per event (an adoptable pod lists its namespace's Jobs). A sync
// costs two indexed cache lists plus the Reconciler's work (see package reconcile).
package controllerruntime
