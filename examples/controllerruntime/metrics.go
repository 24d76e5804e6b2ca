package controllerruntime

import (
	"sync"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/examples/internal/telemetry"
)

// MetricsSubsystem prefixes every metric of Metrics, as upstream's Job controller
// does.
const MetricsSubsystem = telemetry.Subsystem

// Metrics is a reconcile.Metrics that keeps upstream's job_controller_* metrics in
// Prometheus collectors, plus job_controller_stale_sync_skips_total: the
// implementation the client-go controller's command uses too. Setup feeds the two
// metrics that the Reconciler does not report (job_finished_indexes_total and
// jobs_by_external_controller_total) from the Job informer. Safe for concurrent use.
type Metrics = telemetry.Metrics

// NewMetrics returns unregistered collectors; see Metrics.Register.
func NewMetrics() *Metrics { return telemetry.NewMetrics() }

// DefaultMetrics returns the Metrics registered with controller-runtime's registry
// (served by a manager's metrics endpoint), created on first use and shared by every
// controller of the process. Setup uses it when reconcile.Config.Metrics is nil.
var DefaultMetrics = sync.OnceValue(func() *Metrics {
	m := NewMetrics()
	_ = m.Register(crmetrics.Registry) // a fresh Metrics: only a name clash can fail, and it is ours
	return m
})
