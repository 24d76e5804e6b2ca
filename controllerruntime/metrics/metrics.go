package metrics

import (
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// Subsystem returns the prefix of the metrics of a controller of kind: the kind in
// lower case and "_controller", which is "job_controller" for batch/v1 Jobs, the
// prefix of upstream's Job controller, and "trainingjob_controller" for a kind
// TrainingJob.
func Subsystem(kind owner.Kind) string { return strings.ToLower(kind.Kind) + "_controller" }

// JobResource is the group and resource of batch/v1 Jobs, the labels of the
// stale_sync_skips_total series of a Job controller.
var JobResource = schema.GroupResource{Group: "batch", Resource: "jobs"}

// Values of the labels that only Metrics sets (the others are reconcile's).
const (
	// BackoffLimitPerIndex and BackoffLimitGlobal are the backoffLimit label of
	// job_finished_indexes_total: whether the Job sets spec.backoffLimitPerIndex.
	BackoffLimitPerIndex = "perIndex"
	BackoffLimitGlobal   = "global"
	// StatusSucceeded and StatusFailed are the status label of
	// job_finished_indexes_total, the values reconcile gives the result and status
	// labels of its own metrics.
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Metrics is a reconcile.Metrics that keeps upstream's Job controller metrics in
// Prometheus collectors under a subsystem prefix (job_controller_* for batch/v1
// Jobs), plus stale_sync_skips_total. The zero value is not usable: call New, then
// Register. Safe for concurrent use.
type Metrics struct {
	syncDuration    *prometheus.HistogramVec
	syncs           *prometheus.CounterVec
	jobsFinished    *prometheus.CounterVec
	podsFinished    *prometheus.CounterVec
	policyFailures  *prometheus.CounterVec
	finalizers      *prometheus.CounterVec
	podsCreated     *prometheus.CounterVec
	finishedIndexes *prometheus.CounterVec
	externalJobs    *prometheus.CounterVec
	staleSkips      *prometheus.CounterVec
	// staleOwners is the one series of staleSkips: the owner's resource.
	staleOwners prometheus.Counter
}

var _ reconcile.Metrics = (*Metrics)(nil)

// New returns unregistered collectors (see Register) named subsystem_* (Subsystem
// of the owner kind, as a rule); resource (JobResource for batch/v1 Jobs) labels
// the stale_sync_skips_total series.
func New(subsystem string, resource schema.GroupResource) *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: subsystem, Name: name, Help: help}, labels)
	}
	m := &Metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: subsystem, Name: "job_sync_duration_seconds",
			Help:    "Time taken to sync a Job.",
			Buckets: prometheus.ExponentialBuckets(0.004, 2, 15),
		}, []string{"completion_mode", "result", "action"}),
		syncs:           counter("job_syncs_total", "Number of Job syncs.", "completion_mode", "result", "action"),
		jobsFinished:    counter("jobs_finished_total", "Number of Jobs that finished.", "completion_mode", "result", "reason"),
		podsFinished:    counter("job_pods_finished_total", "Number of finished pods counted in Job status.", "completion_mode", "result"),
		policyFailures:  counter("pod_failures_handled_by_failure_policy_total", "Number of failed pods handled by a pod failure policy rule.", "action"),
		finalizers:      counter("terminated_pods_tracking_finalizer_total", "Number of finished pods gaining (add) or losing (delete) the tracking finalizer.", "event"),
		podsCreated:     counter("job_pods_creation_total", "Number of pod creation requests.", "reason", "status"),
		finishedIndexes: counter("job_finished_indexes_total", "Number of indexes of Indexed Jobs that finished.", "status", "backoffLimit"),
		externalJobs:    counter("jobs_by_external_controller_total", "Number of Jobs seen that another controller manages.", "controller_name"),
		// Labelled by the API group and resource of the skipped object, as the
		// controllers of kube-controller-manager label their stale_sync_skips_total.
		staleSkips: counter("stale_sync_skips_total", "Number of syncs skipped because the cached Job was older than the controller's last status write.", "group", "resource"),
	}
	m.staleOwners = m.staleSkips.WithLabelValues(resource.Group, resource.Resource)
	return m
}

// Register registers the collectors with reg. Collectors registered before (by
// another Metrics) are an error, as prometheus.AlreadyRegisteredError.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.syncDuration, m.syncs, m.jobsFinished, m.podsFinished,
		m.policyFailures, m.finalizers, m.podsCreated, m.finishedIndexes, m.externalJobs, m.staleSkips} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

// JobSync observes job_sync_duration_seconds and counts job_syncs_total.
func (m *Metrics) JobSync(mode, result, action string, d time.Duration) {
	m.syncDuration.WithLabelValues(mode, result, action).Observe(d.Seconds())
	m.syncs.WithLabelValues(mode, result, action).Inc()
}

// JobFinished counts jobs_finished_total.
func (m *Metrics) JobFinished(mode, result, reason string) {
	m.jobsFinished.WithLabelValues(mode, result, reason).Inc()
}

// PodsFinished counts job_pods_finished_total.
func (m *Metrics) PodsFinished(mode, result string, n int) {
	m.podsFinished.WithLabelValues(mode, result).Add(float64(n))
}

// PodFailuresHandledByPolicy counts pod_failures_handled_by_failure_policy_total.
func (m *Metrics) PodFailuresHandledByPolicy(action string, n int) {
	m.policyFailures.WithLabelValues(action).Add(float64(n))
}

// TerminatedPodsTrackingFinalizer counts terminated_pods_tracking_finalizer_total.
func (m *Metrics) TerminatedPodsTrackingFinalizer(event string) {
	m.finalizers.WithLabelValues(event).Inc()
}

// PodsCreated counts job_pods_creation_total.
func (m *Metrics) PodsCreated(reason, status string, n int) {
	m.podsCreated.WithLabelValues(reason, status).Add(float64(n))
}

// StaleSyncSkipped counts stale_sync_skips_total.
func (m *Metrics) StaleSyncSkipped() { m.staleOwners.Inc() }

// FinishedIndexes counts n indexes that finished with status (StatusSucceeded or
// StatusFailed) in job_finished_indexes_total; backoffLimit is
// BackoffLimitPerIndex or BackoffLimitGlobal. A non-positive n counts nothing.
func (m *Metrics) FinishedIndexes(status, backoffLimit string, n int) {
	if n > 0 {
		m.finishedIndexes.WithLabelValues(status, backoffLimit).Add(float64(n))
	}
}

// JobByExternalController counts one Job managed by controller (its
// spec.managedBy) in jobs_by_external_controller_total.
func (m *Metrics) JobByExternalController(controller string) {
	m.externalJobs.WithLabelValues(controller).Inc()
}
