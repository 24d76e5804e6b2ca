package controllerruntime_test

import (
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/examples/controllerruntime"
)

// TestDefaultMetrics checks that DefaultMetrics is one Metrics, registered with
// controller-runtime's registry (which the manager serves on /metrics) under the
// Job controller's names. The metrics themselves are tested in internal/telemetry.
func TestDefaultMetrics(t *testing.T) {
	m := controllerruntime.DefaultMetrics()
	if controllerruntime.DefaultMetrics() != m {
		t.Fatal("DefaultMetrics() returned two different Metrics")
	}
	m.JobByExternalController("example.com/default-metrics-test")
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range families {
		if f.GetName() != controllerruntime.MetricsSubsystem+"_jobs_by_external_controller_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "controller_name" && l.GetValue() == "example.com/default-metrics-test" && s.GetCounter().GetValue() == 1 {
					found = true
				}
			}
		}
	}
	if !found {
		t.Error("controller-runtime's registry has no job_controller_jobs_by_external_controller_total{controller_name=example.com/default-metrics-test} 1")
	}
}
