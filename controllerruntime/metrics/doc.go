// Package metrics keeps the Kubernetes Job controller's metrics in Prometheus
// collectors, for a jobkit controller of any owner kind: Metrics is a
// reconcile.Metrics, and EventHandler feeds, from the owner informer, the two
// metrics the Reconciler does not report. It imports Prometheus, client-go's cache
// and the jobkit core, not controller-runtime, so a client-go controller uses it
// too; package controllerruntime registers one with controller-runtime's registry.
//
// # Names
//
// Metrics has upstream's names, types and labels (Kubernetes 1.37) after a
// subsystem prefix: Subsystem of the owner kind, job_controller for batch/v1 Jobs
// (upstream's names exactly) and, for another kind, its own
// (trainingjob_controller_job_syncs_total for a kind TrainingJob), so that two
// controllers in one process never share a series. The rest of each name, and the
// help texts, keep the Job controller's words, so that its dashboards carry over:
//
//	job_sync_duration_seconds   histogram {completion_mode, result, action}  reconcile.Metrics.JobSync
//	job_syncs_total             counter   {completion_mode, result, action}  reconcile.Metrics.JobSync
//	jobs_finished_total         counter   {completion_mode, result, reason}  reconcile.Metrics.JobFinished
//	job_pods_finished_total     counter   {completion_mode, result}          reconcile.Metrics.PodsFinished
//	pod_failures_handled_by_failure_policy_total  counter {action}           reconcile.Metrics.PodFailuresHandledByPolicy
//	terminated_pods_tracking_finalizer_total      counter {event}            reconcile.Metrics.TerminatedPodsTrackingFinalizer
//	job_pods_creation_total     counter   {reason, status}                   reconcile.Metrics.PodsCreated
//	job_finished_indexes_total  counter   {status, backoffLimit}             EventHandler
//	jobs_by_external_controller_total     counter {controller_name}          EventHandler
//	stale_sync_skips_total      counter   {group, resource}                  reconcile.Metrics.StaleSyncSkipped
//
// stale_sync_skips_total has one series, labelled with the owner's API group and
// resource (batch, jobs), as the controllers of kube-controller-manager label
// theirs. EventHandler differs from upstream in two ways, both documented on it:
// finished indexes are counted when the status write that adds them reaches the
// cache, not when it is sent; and "external" means handled by any controller other
// than this one, the built-in Job controller included.
//
// # Cost and concurrency
//
// Every method is safe for concurrent use and costs one map lookup and an atomic
// add, except the owner update handler, which parses status.completedIndexes and
// status.failedIndexes of an Indexed owner it handles (O(length of the strings)).
package metrics
