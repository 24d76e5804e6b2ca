package reconcile

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// EventRecorder records events on Jobs. Its method has the signature of client-go's
// record.EventRecorder.Eventf, so such a recorder can be used as is; eventtype is
// corev1.EventTypeNormal or corev1.EventTypeWarning.
type EventRecorder interface {
	Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
}

// EventRecorderFunc adapts a function to EventRecorder.
type EventRecorderFunc func(object runtime.Object, eventtype, reason, messageFmt string, args ...any)

// Eventf calls f.
func (f EventRecorderFunc) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	f(object, eventtype, reason, messageFmt, args...)
}

type noEvents struct{}

func (noEvents) Eventf(runtime.Object, string, string, string, ...any) {}

// Event reasons the Reconciler records besides those of plan.Event (Completed,
// Suspended, Resumed, TooManySucceededPods and the failure reasons
// BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy, ...).
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonInvalidJob       = "InvalidJob"
)

// Metric label values, as upstream's job_controller_* metrics use them; the Metrics
// methods document them.
const (
	// completion_mode
	labelNonIndexed = "NonIndexed"
	labelIndexed    = "Indexed"
	// labelRoles is the completion_mode of the syncs of an owner of several roles
	// (SyncRoles): its roles' modes differ, and its series stay apart from Jobs'.
	labelRoles = "Roles"
	// labelChildJobs is the completion_mode of the syncs of a group whose roles
	// run as child Jobs (SyncChildJobs).
	labelChildJobs = "ChildJobs"
	// result of job_syncs_total and job_sync_duration_seconds
	labelSuccess = "success"
	labelError   = "error"
	// action of job_syncs_total and job_sync_duration_seconds
	labelReconciling = "reconciling"
	labelTracking    = "tracking"
	labelPodsCreated = "pods_created"
	labelPodsDeleted = "pods_deleted"
	labelJobsCreated = "jobs_created"
	labelJobsDeleted = "jobs_deleted"
	// result of jobs_finished_total and job_pods_finished_total, status of
	// job_pods_creation_total
	labelSucceeded = "succeeded"
	labelFailed    = "failed"
	// reason of job_pods_creation_total
	labelCreationNew                 = "new"
	labelRecreateTerminatingOrFailed = "recreate_terminating_or_failed"
	labelRecreateFailed              = "recreate_failed"
	// event of terminated_pods_tracking_finalizer_total
	labelFinalizerAdd    = "add"
	labelFinalizerDelete = "delete"
)

// Metrics receives what upstream exports as job_controller_* metrics; each method
// below names its metric and labels. A Prometheus implementation maps each method
// to one vector. Methods are called from the goroutine that runs Sync or the event
// mapping; implementations must be safe for concurrent use when those run
// concurrently.
type Metrics interface {
	// JobSync observes one sync: job_sync_duration_seconds and job_syncs_total
	// {completion_mode, result, action}. completionMode is "NonIndexed" or
	// "Indexed" (in every method), "Roles" for an owner of several roles
	// (Reconciler.SyncRoles), or "ChildJobs" for a group of child Jobs
	// (Reconciler.SyncChildJobs: JobSync and JobFinished only), result "success"
	// or "error", action "reconciling" (nothing to do), "tracking" (only status
	// and finalizer work), "pods_created" or "pods_deleted" ("jobs_created" or
	// "jobs_deleted" for child Jobs).
	JobSync(completionMode, result, action string, duration time.Duration)
	// JobFinished counts a Job that got its terminal condition:
	// jobs_finished_total{completion_mode, result, reason}; result is "succeeded"
	// or "failed".
	JobFinished(completionMode, result, reason string)
	// PodsFinished counts pods moved into status.succeeded or status.failed:
	// job_pods_finished_total{completion_mode, result}; result is "succeeded" or
	// "failed".
	PodsFinished(completionMode, result string, n int)
	// PodFailuresHandledByPolicy counts failed pods matched by a pod failure policy
	// rule: pod_failures_handled_by_failure_policy_total{action}.
	PodFailuresHandledByPolicy(action string, n int)
	// TerminatedPodsTrackingFinalizer counts finished pods gaining (event "add") or
	// losing ("delete") the tracking finalizer in the cache:
	// terminated_pods_tracking_finalizer_total{event}.
	TerminatedPodsTrackingFinalizer(event string)
	// PodsCreated counts pod creation requests: job_pods_creation_total{reason,
	// status}; reason is "new", "recreate_terminating_or_failed" or
	// "recreate_failed" (a replacement, by the pod replacement policy), status
	// "succeeded" or "failed".
	PodsCreated(reason, status string, n int)
	// StaleSyncSkipped counts syncs skipped because the cached Job was older than the
	// last status write: stale_sync_skips_total.
	StaleSyncSkipped()
}

// NoMetrics is a Metrics that records nothing; a nil Config.Metrics means NoMetrics.
type NoMetrics struct{}

// JobSync does nothing.
func (NoMetrics) JobSync(string, string, string, time.Duration) {}

// JobFinished does nothing.
func (NoMetrics) JobFinished(string, string, string) {}

// PodsFinished does nothing.
func (NoMetrics) PodsFinished(string, string, int) {}

// PodFailuresHandledByPolicy does nothing.
func (NoMetrics) PodFailuresHandledByPolicy(string, int) {}

// TerminatedPodsTrackingFinalizer does nothing.
func (NoMetrics) TerminatedPodsTrackingFinalizer(string) {}

// PodsCreated does nothing.
func (NoMetrics) PodsCreated(string, string, int) {}

// StaleSyncSkipped does nothing.
func (NoMetrics) StaleSyncSkipped() {}

var _ Metrics = NoMetrics{}
