package controllerruntime_test

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/reconcile"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := controllerruntime.NewMetrics()
	if err := m.Register(reg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	m.JobSync(reconcile.CompletionModeIndexed, reconcile.ResultSuccess, reconcile.ActionPodsCreated, 10*time.Millisecond)
	m.JobSync(reconcile.CompletionModeIndexed, reconcile.ResultSuccess, reconcile.ActionPodsCreated, 20*time.Millisecond)
	m.JobFinished(reconcile.CompletionModeNonIndexed, reconcile.Failed, "BackoffLimitExceeded")
	m.PodsFinished(reconcile.CompletionModeNonIndexed, reconcile.Succeeded, 3)
	m.PodFailuresHandledByPolicy("Ignore", 2)
	m.TerminatedPodsTrackingFinalizer(reconcile.FinalizerEventAdd)
	m.PodsCreated("new", reconcile.Succeeded, 4)
	m.StaleSyncSkipped()

	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var got []string
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			var labels []string
			for _, l := range mt.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			value := mt.GetCounter().GetValue()
			if h := mt.GetHistogram(); h != nil {
				value = float64(h.GetSampleCount())
			}
			got = append(got, f.GetName()+"{"+strings.Join(labels, ",")+"} "+strconv.FormatFloat(value, 'f', -1, 64))
		}
	}
	sort.Strings(got)
	want := []string{
		"job_controller_job_pods_creation_total{reason=new,status=succeeded} 4",
		"job_controller_job_pods_finished_total{completion_mode=NonIndexed,result=succeeded} 3",
		"job_controller_job_sync_duration_seconds{action=pods_created,completion_mode=Indexed,result=success} 2",
		"job_controller_job_syncs_total{action=pods_created,completion_mode=Indexed,result=success} 2",
		"job_controller_jobs_finished_total{completion_mode=NonIndexed,reason=BackoffLimitExceeded,result=failed} 1",
		"job_controller_pod_failures_handled_by_failure_policy_total{action=Ignore} 2",
		"job_controller_stale_sync_skips_total{} 1",
		"job_controller_terminated_pods_tracking_finalizer_total{event=add} 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gathered metrics (-want +got):\n%s", diff)
	}

	var already prometheus.AlreadyRegisteredError
	if err := controllerruntime.NewMetrics().Register(reg); !errors.As(err, &already) {
		t.Errorf("second Register error = %v, want AlreadyRegisteredError", err)
	}
	if first, second := controllerruntime.DefaultMetrics(), controllerruntime.DefaultMetrics(); first != second {
		t.Errorf("DefaultMetrics() returned two different Metrics")
	}
}
