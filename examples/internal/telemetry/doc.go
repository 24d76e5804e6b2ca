// Package telemetry is what the example Job controllers (clientgo and
// controllerruntime) serve to an operator's monitoring: the Kubernetes Job
// controller's job_controller_* metrics in Prometheus collectors (Metrics), and an
// HTTP server for /metrics, /healthz and /readyz (Endpoints) for the binary that has
// no controller-runtime manager to serve them.
//
// # Metrics
//
// Metrics has upstream's names, types and labels (Kubernetes 1.37), all prefixed
// job_controller_:
//
//	job_sync_duration_seconds   histogram {completion_mode, result, action}  reconcile.Metrics.JobSync
//	job_syncs_total             counter   {completion_mode, result, action}  reconcile.Metrics.JobSync
//	jobs_finished_total         counter   {completion_mode, result, reason}  reconcile.Metrics.JobFinished
//	job_pods_finished_total     counter   {completion_mode, result}          reconcile.Metrics.PodsFinished
//	pod_failures_handled_by_failure_policy_total  counter {action}           reconcile.Metrics.PodFailuresHandledByPolicy
//	terminated_pods_tracking_finalizer_total      counter {event}            reconcile.Metrics.TerminatedPodsTrackingFinalizer
//	job_pods_creation_total     counter   {reason, status}                   reconcile.Metrics.PodsCreated
//	job_finished_indexes_total  counter   {status, backoffLimit}             JobEventHandler
//	jobs_by_external_controller_total     counter {controller_name}          JobEventHandler
//	stale_sync_skips_total      counter   {group, resource}: batch, jobs     reconcile.Metrics.StaleSyncSkipped
//
// The Reconciler reports the first seven and the last through reconcile.Metrics.
// The other two it does not report, so Metrics derives them from the Job informer
// (JobEventHandler), which differs from upstream in two ways, both documented on
// JobEventHandler: finished indexes are counted when the status write that adds them
// reaches the cache, not when it is sent; and "external" means managed by any
// controller other than this one, the built-in Job controller included.
//
// # Cost and concurrency
//
// Every method is safe for concurrent use and costs one map lookup and an atomic
// add, except the Job update handler, which parses status.completedIndexes and
// status.failedIndexes of an Indexed Job it manages (O(length of the strings)).
package telemetry
