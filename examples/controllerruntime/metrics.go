package controllerruntime

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/reconcile"
)

// MetricsSubsystem prefixes every metric of Metrics, as upstream's Job controller
// does.
const MetricsSubsystem = "job_controller"

// Metrics is a reconcile.Metrics that keeps upstream's job_controller_* metrics in
// Prometheus collectors (see package reconcile for names and labels), plus
// job_controller_stale_sync_skips_total. Safe for concurrent use.
type Metrics struct {
	syncDuration   *prometheus.HistogramVec
	syncs          *prometheus.CounterVec
	jobsFinished   *prometheus.CounterVec
	podsFinished   *prometheus.CounterVec
	policyFailures *prometheus.CounterVec
	finalizers     *prometheus.CounterVec
	podsCreated    *prometheus.CounterVec
	staleSkips     prometheus.Counter
}

var _ reconcile.Metrics = (*Metrics)(nil)

// NewMetrics returns unregistered collectors; see Register.
func NewMetrics() *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: MetricsSubsystem, Name: name, Help: help}, labels)
	}
	return &Metrics{
		syncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: MetricsSubsystem, Name: "job_sync_duration_seconds",
			Help:    "Time taken to sync a Job.",
			Buckets: prometheus.ExponentialBuckets(0.004, 2, 15),
		}, []string{"completion_mode", "result", "action"}),
		syncs:          counter("job_syncs_total", "Number of Job syncs.", "completion_mode", "result", "action"),
		jobsFinished:   counter("jobs_finished_total", "Number of Jobs that finished.", "completion_mode", "result", "reason"),
		podsFinished:   counter("job_pods_finished_total", "Number of finished pods counted in Job status.", "completion_mode", "result"),
		policyFailures: counter("pod_failures_handled_by_failure_policy_total", "Number of failed pods handled by a pod failure policy rule.", "action"),
		finalizers:     counter("terminated_pods_tracking_finalizer_total", "Number of finished pods gaining (add) or losing (delete) the tracking finalizer.", "event"),
		podsCreated:    counter("job_pods_creation_total", "Number of pod creation requests.", "reason", "status"),
		staleSkips: prometheus.NewCounter(prometheus.CounterOpts{Subsystem: MetricsSubsystem, Name: "stale_sync_skips_total",
			Help: "Number of syncs skipped because the cached Job was older than the controller's last status write."}),
	}
}

// Register registers the collectors with reg. Collectors registered before (by
// another Metrics) are an error, as prometheus.AlreadyRegisteredError.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	var errs []error
	for _, c := range []prometheus.Collector{m.syncDuration, m.syncs, m.jobsFinished, m.podsFinished, m.policyFailures, m.finalizers, m.podsCreated, m.staleSkips} {
		errs = append(errs, reg.Register(c))
	}
	return errors.Join(errs...)
}

// DefaultMetrics returns the Metrics registered with controller-runtime's registry
// (served by a manager's metrics endpoint), created on first use and shared by every
// controller of the process. Setup uses it when reconcile.Config.Metrics is nil.
var DefaultMetrics = sync.OnceValue(func() *Metrics {
	m := NewMetrics()
	_ = m.Register(crmetrics.Registry) // a fresh Metrics: only a name clash can fail, and it is ours
	return m
})

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
func (m *Metrics) StaleSyncSkipped() { m.staleSkips.Inc() }
