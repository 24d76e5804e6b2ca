// Package clientgo is a batch/v1 Job controller built on client-go and jobkit: it
// manages the Jobs whose spec.managedBy is its name (DefaultName,
// "jobkit.dev/job-controller", unless configured), so it runs beside the built-in Job
// controller of any cluster, which leaves such Jobs alone.
//
//	cs, err := clientgo.NewClientset(cfg) // or kubernetes.NewForConfig(cfg)
//	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(clientgo.TrimPods))
//	ctrl, err := clientgo.New(cs, factory, reconcile.Config{Name: "example.com/jobs"}, clientgo.Options{})
//	...
//	err = ctrl.Run(ctx, 5)
//
// cmd/jobkit-clientgo wires flags (--kubeconfig, --workers, --managed-by,
// --leader-elect) to it.
//
// # Parts
//
//   - Client: reconcile.Client over kubernetes.Interface, one API call per method:
//     pod creation, deletion with a UID precondition (metav1.Preconditions), patch,
//     read, and the Job status subresource. It passes reconciletest.RunClientConformance
//     against a real kube-apiserver.
//   - NewClientset: a clientset whose core group decodes pods in protobuf without
//     metadata.managedFields (PodsWithoutManagedFields), skipped in the wire bytes
//     (BenchmarkDecodePod: half the time, 58% less memory for a pod a kubelet has
//     written), for the pod watch, lists and the answers to pod writes; every group
//     shares one HTTP client and one rate limiter.
//   - Shared informers for Jobs and pods, with the pod index PodControllerUIDIndex
//     (pods by controller UID, orphans by namespace), so that listing a Job's pods
//     costs the Job's pods plus its namespace's orphans, not the cluster's pods.
//   - Event handlers that feed Reconciler.ObservePodEvent and ObserveOwnerEvent: they
//     lower the expectations, queue Jobs (pod events batched with AddAfter for
//     Config.PodEventBatchPeriod; Job additions and spec changes at once), the Jobs
//     that may adopt an orphan, and the pods that need the orphan cleanup.
//   - Two typed rate-limited work queues with upstream's per-item exponential limiter
//     (APIBackoffBase to APIBackoffMax, 1s to 1m): "job", whose workers call
//     Reconciler.Sync with a lister over the index (so the expectations are
//     checked before the pods are listed), and "job_orphan_pod", whose workers call
//     Reconciler.CleanOrphan (which confirms a Job missing from the informer with a
//     GET through Config.ReadOwner, except for a Job the informer saw deleted). A
//     sync error requeues with rate limiting; Result.RequeueAfter (backoff,
//     deadline, stale cache, a conflict) with AddAfter.
//   - Events through client-go's record.EventRecorder (it satisfies
//     reconcile.EventRecorder), written to the API while Run runs, unless
//     Config.Events is given.
//
// # Concurrency and lifecycle
//
// New registers the handlers and the index; Run starts the factory's informers,
// waits for their caches, runs the workers until its context ends, then shuts the
// queues down, waits for the workers and removes its handlers. A Controller runs
// once. One Job key is synced by one worker at a time (the work queue guarantees it),
// which is what the Reconciler needs. Several Controllers with different names may
// share a process, and even an informer factory.
//
// # Differences from upstream
//
//   - The orphan worker confirms with a GET that a pod's Job is gone (or replaced)
//     before removing the tracking finalizer: when the Job cache lags the pod cache
//     (the Job was created by someone else a moment ago, and its controller made the
//     pod), the cache alone would strip the finalizer of a live Job's pod, and that
//     pod's outcome would be lost. It costs one GET per orphan whose Job is missing
//     from the cache, except for Jobs whose deletion the informer reported (their
//     UIDs are remembered for ten minutes).
//   - Jobs of other controllers are filtered out in the handlers and the worker
//     before any work; their deletion still queues their pods for the orphan cleanup,
//     whose rules (finalizers.DecideOrphan) keep the finalizers of a live Job managed
//     elsewhere.
//   - Orphans are indexed per namespace, under "orphan/<namespace>", so a sync reads
//     only its own namespace's orphans when looking for pods to adopt.
//   - No Prometheus metrics are registered: Config.Metrics is passed through to the
//     Reconciler as given. cmd/jobkit-clientgo passes the job_controller_* metrics
//     of the controllerruntime module's package metrics (which imports no
//     controller-runtime; the controller-runtime controllers register the same
//     metrics) and serves them on /metrics with examples/internal/telemetry, with
//     /healthz and /readyz (HasSynced).
package clientgo
