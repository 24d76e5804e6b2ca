package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

func TestParseCaseLimits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		jobs, pods int
		wantErr    string
	}{
		{name: "small-2000x5", jobs: 2000, pods: 10000},
		{name: "small-10000x10", jobs: 10000, pods: 100000},
		{name: "indexed-100000", jobs: 1, pods: 100000},
		{name: "small-10001x1", wantErr: `Jobs "10001": want an integer from 1 to 10000`},
		{name: "small-10000x11", wantErr: `10000 Jobs of 11 pods: want at most 100000 pods in all`},
		{name: "indexed-100001", wantErr: `pods "100001": want an integer from 1 to 100000`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseCase(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseCase(%q) error = %v, want one containing %q", tc.name, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Jobs != tc.jobs || c.Pods() != tc.pods {
				t.Errorf("parseCase(%q) = %d Jobs, %d pods; want %d and %d", tc.name, c.Jobs, c.Pods(), tc.jobs, tc.pods)
			}
		})
	}
}

func TestCreateJobs(t *testing.T) {
	cs := fake.NewClientset()
	b := &bench{cs: cs, namespace: "bench", nodes: []string{"kwok-0", "kwok-1"}}
	c, _ := parseCase("small-40x3")
	before := time.Now()
	created, err := b.createJobs(context.Background(), c, managedByJobkit, 0)
	if err != nil {
		t.Fatal(err)
	}
	list, err := cs.BatchV1().Jobs("bench").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 40 || len(created) != 40 {
		t.Fatalf("%d Jobs created, %d creation times; want 40 of each", len(list.Items), len(created))
	}
	nodes := map[string]int{}
	for _, j := range list.Items {
		at, ok := created[j.Name]
		if !ok || at.Before(before) {
			t.Errorf("Job %s: creation time %v (known %v), want one after %v", j.Name, at, ok, before)
		}
		if got := *j.Spec.ManagedBy; got != managedByJobkit {
			t.Errorf("Job %s: managedBy %q, want %q", j.Name, got, managedByJobkit)
		}
		nodes[j.Spec.Template.Spec.NodeName]++
	}
	if diff := cmp.Diff(map[string]int{"kwok-0": 20, "kwok-1": 20}, nodes); diff != "" {
		t.Errorf("Jobs by node (-want +got):\n%s", diff)
	}
	// The second time every name exists: the first error is returned, naming the case.
	if _, err := b.createJobs(context.Background(), c, managedByJobkit, 0); err == nil || !strings.Contains(err.Error(), "of small-40x3") {
		t.Errorf("createJobs of existing Jobs: error %v, want one naming the case", err)
	}
}

func TestJobLatenciesAndPercentile(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	created := map[string]time.Time{"a": at(1), "b": at(2), "c": at(10)}
	finished := map[string]time.Time{"a": at(4), "b": at(3), "c": at(9), "d": at(7)}
	// c's create returned after its finished condition was seen: it counts from start.
	got := jobLatencies(created, finished, start)
	if diff := cmp.Diff([]float64{1, 3, 7, 9}, got); diff != "" {
		t.Errorf("jobLatencies (-want +got):\n%s", diff)
	}
	sorted := make([]float64, 200)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{sorted, 0.5, 100},
		{sorted, 0.99, 198},
		{sorted, 1, 200},
		{sorted, 0, 1},
		{[]float64{5}, 0.99, 5},
		{nil, 0.5, 0},
	} {
		if got := percentile(tc.xs, tc.q); got != tc.want {
			t.Errorf("percentile(%d values, %v) = %v, want %v", len(tc.xs), tc.q, got, tc.want)
		}
	}
}

func TestParseCounterBy(t *testing.T) {
	text := `# HELP apiserver_watch_cache_events_received_total Counter of events received in watch cache broken by resource type.
# TYPE apiserver_watch_cache_events_received_total counter
apiserver_watch_cache_events_received_total{group="",resource="pods"} 120
apiserver_watch_cache_events_received_total{group="batch",resource="jobs"} 7
apiserver_watch_cache_events_received_total{group="",resource="nodes"} 40
apiserver_watch_cache_events_received_total_other{group="",resource="pods"} 99
apiserver_watch_cache_events_dispatched_total{group="",resource="pods"} 5
`
	got, err := parseCounterBy(strings.NewReader(text), watchEventsMetric, "resource")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"pods": 120, "jobs": 7, "nodes": 40}, got); diff != "" {
		t.Errorf("parseCounterBy (-want +got):\n%s", diff)
	}
	if n := watchEvents(got); n != 127 {
		t.Errorf("watchEvents = %v, want 127 (pods and Jobs only)", n)
	}
	for _, bad := range []string{
		watchEventsMetric + `{resource="pods" 1`,
		watchEventsMetric + `{resource="pods"}`,
		watchEventsMetric + `{resource="pods"} x`,
		watchEventsMetric + `{resource=pods} 1`,
	} {
		if _, err := parseCounterBy(strings.NewReader(bad), watchEventsMetric, "resource"); err == nil || !strings.Contains(err.Error(), watchEventsMetric) {
			t.Errorf("parseCounterBy(%q) error = %v, want one naming the metric", bad, err)
		}
	}
}

func TestPerEventAndGoals(t *testing.T) {
	if got := perEvent(0.5, 100000); got != 5 {
		t.Errorf("perEvent(0.5 s, 100000) = %v µs, want 5", got)
	}
	if got := perEvent(1, 0); got != 0 {
		t.Errorf("perEvent(1 s, 0 events) = %v, want 0", got)
	}
	kcm := summary{Duration: 100, Writes: 40000, CPU: 50, RSS: 500}
	for _, tc := range []struct {
		jobkit summary
		want   string
	}{
		{summary{Duration: 90, Writes: 40000, CPU: 40, RSS: 300}, "time met, writes met, CPU met, RSS met"},
		{summary{Duration: 101, Writes: 40001, CPU: 40.1, RSS: 301}, "time not met, writes not met, CPU not met, RSS not met"},
	} {
		if got := goalsLine(kcm, tc.jobkit); got != tc.want {
			t.Errorf("goalsLine(%+v) = %q, want %q", tc.jobkit, got, tc.want)
		}
	}
}

func TestWriteScaleTable(t *testing.T) {
	c, _ := parseCase("small-4x5")
	q := qps{QPS: 500, Burst: 1000}
	mk := func(ctrl string, d, p50, p99, events, handlers float64) result {
		return result{Case: c, Controller: ctrl, Limits: q, Duration: time.Duration(d * 1e9),
			JobTimes: []float64{p50, p50, p50, p99}, Events: events, CPU: 2, PeakRSS: 100 << 20,
			OtherCPU: map[string]float64{"etcd": 3, "kube-apiserver": 9},
			CPUParts: map[string]float64{handlerPart: handlers, informerPart: 0.1}}
	}
	var out bytes.Buffer
	writeTables(&out, []result{mk("kcm", 10, 2, 8, 1000, 0.02), mk("jobkit", 9, 1, 7, 1000, 0.01)})
	got := out.String()
	for _, want := range []string{
		"| small-4x5 | 500/1000 | 2.0 / 8.0 | 1.0 / 7.0 | 3.0 / 3.0 | 1000 / 1000 | 20.0 / 10.0 | 120.0 / 110.0 | time met, writes met, CPU not met, RSS not met |",
		"| " + handlerPart + " | 0.02 | 0.01 | 0.50 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("writeTables: no line %q in\n%s", want, got)
		}
	}
	r := mk("jobkit", 9, 1, 7, 1000, 0.01)
	if line := r.line(); !strings.Contains(line, "jobs-p50=1.0s jobs-p99=7.0s watch-events=1000") {
		t.Errorf("line() = %q: no Job quantiles and watch events", line)
	}
}

func TestParseFlagsControllers(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantOnly string
		wantErr  string
	}{
		{args: []string{"--kcm", "k", "--jobkit", "j"}},
		{args: []string{"--kcm", "k", "--jobkit", "j", "--controllers", "jobkit,kcm"}},
		{args: []string{"--jobkit", "j", "--controllers", "jobkit"}, wantOnly: "jobkit"},
		{args: []string{"--kcm", "k", "--controllers", "kcm"}, wantOnly: "kcm"},
		{args: []string{"--jobkit", "j"}, wantErr: "--kcm and --jobkit are required"},
		{args: []string{"--kcm", "k", "--controllers", "jobkit"}, wantErr: "--kcm and --jobkit are required"},
		{args: []string{"--kcm", "k", "--jobkit", "j", "--controllers", "both"}, wantErr: `--controllers="both": want kcm,jobkit, kcm or jobkit`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o, err := parseFlags(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseFlags error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.only != tc.wantOnly {
				t.Errorf("only = %q, want %q", o.only, tc.wantOnly)
			}
		})
	}
}

func TestIsAPIStatus(t *testing.T) {
	if !isAPIStatus(apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))) {
		t.Error("isAPIStatus(Forbidden) = false, want true")
	}
	if isAPIStatus(fmt.Errorf("delete: %w", errors.New("stream error: stream ID 4111; INTERNAL_ERROR"))) {
		t.Error("isAPIStatus(a stream reset) = true, want false")
	}
}

func TestInParallel(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]bool{}
	if err := inParallel(100, 7, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		seen[i] = true
		return nil
	}); err != nil || len(seen) != 100 {
		t.Fatalf("inParallel(100, 7) = %v, %d calls; want nil and 100", err, len(seen))
	}
	calls := 0
	err := inParallel(1000, 1, func(i int) error {
		calls++
		if i == 3 {
			return fmt.Errorf("call %d failed", i)
		}
		return nil
	})
	if err == nil || err.Error() != "call 3 failed" || calls > 5 {
		t.Errorf("inParallel with a failure = %v after %d calls; want call 3's error and no more than 5 calls", err, calls)
	}
}
