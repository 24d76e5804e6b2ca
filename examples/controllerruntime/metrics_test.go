package controllerruntime_test

import (
	"slices"
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

// Setup registers upstream's job_controller_* metrics with controller-runtime's
// registry (which the manager serves on /metrics), the stale-skips series labelled
// as kube-controller-manager labels it. The metrics themselves are tested in the
// controllerruntime module's package metrics.
func TestSetupRegistersJobMetrics(t *testing.T) {
	mgr, err := controllerruntime.NewManager(restConfig, controllerruntime.ManagerOptions{SkipNameValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := controllerruntime.Setup(mgr, reconcile.Config{Name: "test.jobkit.dev/metrics"}, controllerruntime.Options{SkipNameValidation: true, ControllerName: "metrics-test"}); err != nil {
		t.Fatal(err)
	}
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, f := range families {
		if f.GetName() != "job_controller_stale_sync_skips_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				stale = append(stale, l.GetName()+"="+l.GetValue())
			}
		}
	}
	if !slices.Contains(stale, "group=batch") || !slices.Contains(stale, "resource=jobs") {
		t.Errorf("job_controller_stale_sync_skips_total labels %v, want group=batch and resource=jobs", stale)
	}
}
