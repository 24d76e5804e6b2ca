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
// Setup is one call of the importable integration, github.com/jobkit/jobkit/
// controllerruntime (jkcr.Setup with reconcile.JobType), which any owner kind's
// controller makes (examples/trainingjob is another): the pod field index, the Job
// and pod watches with the Reconciler's owner and pod events, the orphan worker
// with the uncached Job read, events.k8s.io/v1 events, upstream's
// job_controller_* metrics on controller-runtime's registry, and the 1s-to-1m
// requeue backoff after an API error (Options.APIBackoff). Its package doc says
// how, and where it departs from a textbook controller-runtime controller.
//
// NewManager enables leader election on request (the Lease named LeaseName of the
// managedBy name, released on shutdown), strips managedFields from the cache,
// serves metrics only when asked (over HTTPS with authentication and
// authorization when ManagerOptions.SecureMetrics is set), and serves /healthz
// (ping) and /readyz (the caches have synced) at
// ManagerOptions.HealthProbeBindAddress.
//
// # Concurrency and cost
//
// Options.Workers Jobs are synced at once (one goroutine per key at a time, as the
// workqueue guarantees); event handlers run on the informers' goroutines and take
// O(1) cache reads per event (an adoptable pod lists its namespace's Jobs). A sync
// costs two indexed cache lists plus the Reconciler's work (see package reconcile).
package controllerruntime
