package metrics_test

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/controllerruntime/metrics"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

// gather returns every series of reg as `name{label=value,...} value`, sorted;
// a histogram's value is its sample count.
func gather(t testing.TB, reg *prometheus.Registry) []string {
	t.Helper()
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
	return got
}

func newRegistered(t testing.TB) (*metrics.Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(metrics.Subsystem(owner.BatchJob), metrics.JobResource)
	if err := m.Register(reg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return m, reg
}

func TestMetrics(t *testing.T) {
	m, reg := newRegistered(t)
	m.JobSync("Indexed", "success", "pods_created", 10*time.Millisecond)
	m.JobSync("Indexed", "success", "pods_created", 20*time.Millisecond)
	m.JobFinished("NonIndexed", metrics.StatusFailed, "BackoffLimitExceeded")
	m.PodsFinished("NonIndexed", metrics.StatusSucceeded, 3)
	m.PodFailuresHandledByPolicy("Ignore", 2)
	m.TerminatedPodsTrackingFinalizer("add")
	m.PodsCreated("new", metrics.StatusSucceeded, 4)
	m.FinishedIndexes(metrics.StatusFailed, metrics.BackoffLimitPerIndex, 2)
	m.FinishedIndexes(metrics.StatusSucceeded, metrics.BackoffLimitGlobal, 0) // nothing
	m.JobByExternalController(batchv1.JobControllerName)
	m.StaleSyncSkipped()

	want := []string{
		"job_controller_job_finished_indexes_total{backoffLimit=perIndex,status=failed} 2",
		"job_controller_job_pods_creation_total{reason=new,status=succeeded} 4",
		"job_controller_job_pods_finished_total{completion_mode=NonIndexed,result=succeeded} 3",
		"job_controller_job_sync_duration_seconds{action=pods_created,completion_mode=Indexed,result=success} 2",
		"job_controller_job_syncs_total{action=pods_created,completion_mode=Indexed,result=success} 2",
		"job_controller_jobs_by_external_controller_total{controller_name=kubernetes.io/job-controller} 1",
		"job_controller_jobs_finished_total{completion_mode=NonIndexed,reason=BackoffLimitExceeded,result=failed} 1",
		"job_controller_pod_failures_handled_by_failure_policy_total{action=Ignore} 2",
		"job_controller_stale_sync_skips_total{group=batch,resource=jobs} 1",
		"job_controller_terminated_pods_tracking_finalizer_total{event=add} 1",
	}
	if diff := cmp.Diff(want, gather(t, reg)); diff != "" {
		t.Errorf("gathered metrics (-want +got):\n%s", diff)
	}

	var already prometheus.AlreadyRegisteredError
	if err := metrics.New(metrics.Subsystem(owner.BatchJob), metrics.JobResource).Register(reg); !errors.As(err, &already) {
		t.Errorf("second Register error = %v, want AlreadyRegisteredError", err)
	}
}

// indexedJob is an Indexed Job of 10 completions managed by managedBy with the
// given status lists.
func indexedJob(managedBy *string, perIndex bool, completed, failed string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: batchv1.JobSpec{
			ManagedBy:      managedBy,
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To[int32](10),
		},
		Status: batchv1.JobStatus{CompletedIndexes: completed},
	}
	if perIndex {
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		j.Status.FailedIndexes = ptr.To(failed)
	}
	return j
}

func TestJobEventHandler(t *testing.T) {
	const us = "example.com/us"
	tests := []struct {
		name string
		add  *batchv1.Job
		old  *batchv1.Job
		cur  *batchv1.Job
		want []string
	}{
		{name: "added Job of ours", add: indexedJob(ptr.To(us), false, "", ""), want: nil},
		{name: "added Job of another controller", add: indexedJob(ptr.To("example.com/them"), false, "", ""),
			want: []string{"job_controller_jobs_by_external_controller_total{controller_name=example.com/them} 1"}},
		{name: "added Job without managedBy is the built-in controller's", add: indexedJob(nil, false, "", ""),
			want: []string{"job_controller_jobs_by_external_controller_total{controller_name=kubernetes.io/job-controller} 1"}},
		{name: "completed indexes grow", old: indexedJob(ptr.To(us), false, "1", ""), cur: indexedJob(ptr.To(us), false, "1-3,7", ""),
			want: []string{"job_controller_job_finished_indexes_total{backoffLimit=global,status=succeeded} 3"}},
		{name: "per-index Job: completed and failed grow", old: indexedJob(ptr.To(us), true, "", "2"), cur: indexedJob(ptr.To(us), true, "0", "2,4,5"),
			want: []string{
				"job_controller_job_finished_indexes_total{backoffLimit=perIndex,status=failed} 2",
				"job_controller_job_finished_indexes_total{backoffLimit=perIndex,status=succeeded} 1",
			}},
		{name: "shrinking lists count nothing", old: indexedJob(ptr.To(us), false, "0-5", ""), cur: indexedJob(ptr.To(us), false, "0-2", ""), want: nil},
		{name: "unparsable parts are not counted", old: indexedJob(ptr.To(us), false, "", ""), cur: indexedJob(ptr.To(us), false, "1,x,3", ""),
			want: []string{"job_controller_job_finished_indexes_total{backoffLimit=global,status=succeeded} 2"}},
		{name: "another controller's Job", old: indexedJob(ptr.To("example.com/them"), false, "", ""), cur: indexedJob(ptr.To("example.com/them"), false, "0-3", ""), want: nil},
		{name: "NonIndexed Job", old: &batchv1.Job{Spec: batchv1.JobSpec{ManagedBy: ptr.To(us)}},
			cur: &batchv1.Job{Spec: batchv1.JobSpec{ManagedBy: ptr.To(us)}, Status: batchv1.JobStatus{Succeeded: 3, CompletedIndexes: "0-2"}}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, reg := newRegistered(t)
			h := m.JobEventHandler(us)
			var before []*batchv1.Job
			for _, j := range []*batchv1.Job{tt.add, tt.old, tt.cur} {
				if j != nil {
					before = append(before, j.DeepCopy())
				}
			}
			if tt.add != nil {
				h.OnAdd(tt.add, false)
			} else {
				h.OnUpdate(tt.old, tt.cur)
			}
			// Only the stale-sync series (created with its labels) appears before it is counted.
			got := slicesWithout(gather(t, reg), "job_controller_stale_sync_skips_total{group=batch,resource=jobs} 0")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("metrics after the event (-want +got):\n%s", diff)
			}
			var after []*batchv1.Job
			for _, j := range []*batchv1.Job{tt.add, tt.old, tt.cur} {
				if j != nil {
					after = append(after, j)
				}
			}
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("the handler modified its Jobs (-before +after):\n%s", diff)
			}
		})
	}
}

func slicesWithout(xs []string, drop string) []string {
	var out []string
	for _, x := range xs {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// A client-go controller's command: Metrics for the Reconciler, the Job informer's
// handler for the two metrics the Reconciler does not report, and a registry to
// serve.
func ExampleMetrics() {
	m := metrics.New(metrics.Subsystem(owner.BatchJob), metrics.JobResource)
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		panic(err)
	}
	// reconcile.Config{Metrics: m}; factory.Batch().V1().Jobs().Informer().AddEventHandler(m.JobEventHandler(name))
	m.PodsCreated("new", metrics.StatusSucceeded, 2)
	families, _ := reg.Gather()
	for _, f := range families {
		for _, s := range f.GetMetric() {
			fmt.Println(f.GetName(), s.GetCounter().GetValue())
		}
	}
	// Output:
	// job_controller_job_pods_creation_total 2
	// job_controller_stale_sync_skips_total 0
}

// BenchmarkJobEventHandlerUpdate measures the update handler of an Indexed Job whose
// completed indexes grow by one, at 10, 1,000 and 100,000 indexes (the worst case:
// every other index completed, so the list has n/2 parts).
func BenchmarkJobEventHandlerUpdate(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var parts []string
			for i := 0; i < n; i += 2 {
				parts = append(parts, strconv.Itoa(i))
			}
			old := indexedJob(ptr.To("us"), false, strings.Join(parts, ","), "")
			old.Spec.Completions = ptr.To(int32(n))
			cur := old.DeepCopy()
			cur.Status.CompletedIndexes += "," + strconv.Itoa(n-1)
			m, _ := newRegistered(b)
			h := m.JobEventHandler("us")
			b.ReportAllocs()
			for b.Loop() {
				h.OnUpdate(old, cur)
			}
		})
	}
}

// EventHandler for an owner kind other than batch/v1 Job: its own prefix and
// resource labels, an unset managedBy is this controller's (not external), and a
// workload that does not convert is skipped.
func TestEventHandlerCustomKind(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}
	tests := []struct {
		name      string
		managedBy *string
		convert   bool
		want      []string
	}{
		{name: "unset managedBy: ours", convert: true},
		{name: "another controller", managedBy: ptr.To("example.com/them"), convert: true,
			want: []string{"trainingjob_controller_jobs_by_external_controller_total{controller_name=example.com/them} 1"}},
		{name: "does not convert", managedBy: ptr.To("example.com/them")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := metrics.New(metrics.Subsystem(kind), schema.GroupResource{Group: kind.Group, Resource: "trainingjobs"})
			if err := m.Register(reg); err != nil {
				t.Fatal(err)
			}
			h := m.EventHandler("example.com/us", kind, func(obj any) (*plan.Workload, bool) {
				return &plan.Workload{Spec: plan.Spec{ManagedBy: tt.managedBy}}, tt.convert
			})
			h.OnAdd(struct{}{}, false)
			got := slicesWithout(gather(t, reg), "trainingjob_controller_stale_sync_skips_total{group=ml.example.com,resource=trainingjobs} 0")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("metrics after the add (-want +got):\n%s", diff)
			}
		})
	}
}

// The prefix of an owner kind's metrics: the Job controller's for batch/v1 Jobs,
// the kind's own otherwise.
func ExampleSubsystem() {
	fmt.Println(metrics.Subsystem(owner.BatchJob))
	fmt.Println(metrics.Subsystem(owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob"}))
	// Output:
	// job_controller
	// trainingjob_controller
}
