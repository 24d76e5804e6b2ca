package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
)

func TestParseCase(t *testing.T) {
	tests := []struct {
		name    string
		want    jobCase
		wantErr string
	}{
		{name: "nonindexed-100", want: jobCase{Name: "nonindexed-100", Jobs: 1, Completions: 100}},
		{name: "indexed-5000", want: jobCase{Name: "indexed-5000", Jobs: 1, Completions: 5000, Indexed: true}},
		{name: "failures-100", want: jobCase{Name: "failures-100", Jobs: 1, Completions: 100, Indexed: true, Failures: true}},
		{name: "small-50x10", want: jobCase{Name: "small-50x10", Jobs: 50, Completions: 10}},
		{name: "indexed", wantErr: `case "indexed": want nonindexed-N`},
		{name: "serial-10", wantErr: `kind "serial"`},
		{name: "indexed-0", wantErr: `pods "0": want an integer from 1 to 100000`},
		{name: "small-10", wantErr: `want small-JxN`},
		{name: "small-0x10", wantErr: `Jobs "0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCase(tt.name)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseCase(%q) error = %v, want one containing %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseCase(%q) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestCaseWantAndJob(t *testing.T) {
	c, err := parseCase("failures-95")
	if err != nil {
		t.Fatal(err)
	}
	// Indexes 0, 10, ..., 90 fail.
	want := want{Succeeded: 85, Failed: 10, Condition: batchv1.JobFailed, Reason: batchv1.JobReasonFailedIndexes}
	if got := c.want(); got != want {
		t.Errorf("want() = %+v, want %+v", got, want)
	}
	j := c.job(3, "bench", managedByJobkit, "kwok-1")
	if j.Name != "failures-95-3" || *j.Spec.ManagedBy != managedByJobkit || j.Spec.Template.Spec.NodeName != "kwok-1" {
		t.Errorf("job() = name %s managedBy %v node %s", j.Name, *j.Spec.ManagedBy, j.Spec.Template.Spec.NodeName)
	}
	if *j.Spec.MaxFailedIndexes != 10 || *j.Spec.BackoffLimitPerIndex != 1 || j.Spec.BackoffLimit != nil {
		t.Errorf("job() limits: maxFailedIndexes %d backoffLimitPerIndex %d backoffLimit %v", *j.Spec.MaxFailedIndexes, *j.Spec.BackoffLimitPerIndex, j.Spec.BackoffLimit)
	}
	if got := j.Spec.Template.Annotations[annotationExitCode]; got != "42" {
		t.Errorf("exit code annotation = %q, want 42", got)
	}
	plain, _ := parseCase("nonindexed-10")
	if j := plain.job(0, "bench", "", "kwok-0"); j.Spec.ManagedBy != nil || j.Spec.CompletionMode != nil || j.Spec.PodFailurePolicy != nil {
		t.Errorf("nonindexed job() = managedBy %v completionMode %v podFailurePolicy %v, want all nil", j.Spec.ManagedBy, j.Spec.CompletionMode, j.Spec.PodFailurePolicy)
	}
}

func TestParseQPS(t *testing.T) {
	if got, err := parseQPS("20/30"); err != nil || got != (qps{QPS: 20, Burst: 30}) {
		t.Errorf("parseQPS(20/30) = %v, %v", got, err)
	}
	for _, bad := range []string{"20", "0/30", "20/0", "a/b"} {
		if _, err := parseQPS(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("parseQPS(%q) error = %v, want one naming the value", bad, err)
		}
	}
}

func TestParseRequests(t *testing.T) {
	const metrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 100
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="batch",resource="jobs",scope="resource",subresource="status",verb="PUT",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 3e+02
apiserver_request_duration_seconds_bucket{le="0.1",resource="pods",verb="POST"} 5
`
	got, err := parseRequests(strings.NewReader(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := requests{
		{Verb: "POST", Resource: "pods"}:                         102,
		{Verb: "PUT", Resource: "jobs", Subresource: "status"}:   7,
		{Verb: "PATCH", Resource: "pods", Subresource: "status"}: 300,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseRequests (-want +got):\n%s", diff)
	}
	before := requests{{Verb: "POST", Resource: "pods"}: 2, {Verb: "PUT", Resource: "jobs", Subresource: "status"}: 7}
	if diff := cmp.Diff(requests{{Verb: "POST", Resource: "pods"}: 100, {Verb: "PATCH", Resource: "pods", Subresource: "status"}: 300}, got.sub(before)); diff != "" {
		t.Errorf("sub (-want +got):\n%s", diff)
	}
	if _, err := parseRequests(strings.NewReader(`apiserver_request_total{verb="POST} 1`)); err == nil {
		t.Error("parseRequests of an unterminated label: no error")
	}
}

func TestParseCounter(t *testing.T) {
	const text = `# HELP job_controller_job_syncs_total [STABLE] The number of job syncs
# TYPE job_controller_job_syncs_total counter
job_controller_job_syncs_total{action="pods_created",completion_mode="Indexed",result="success"} 12
job_controller_job_syncs_total{action="tracking",completion_mode="Indexed",result="error"} 3
job_controller_job_syncs_total_other 100
job_controller_job_syncs_totalx{a="b"} 100
plain_counter 7
`
	for _, tc := range []struct {
		name, metric string
		want         float64
		found        bool
	}{
		{"labelled series summed", "job_controller_job_syncs_total", 15, true},
		{"a series without labels", "plain_counter", 7, true},
		{"absent", "job_controller_jobs_finished_total", 0, false},
		{"a prefix of another name is not it", "plain", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := parseCounter(strings.NewReader(text), tc.metric)
			if err != nil || got != tc.want || found != tc.found {
				t.Errorf("parseCounter(%s) = %v, %v, %v; want %v, %v, nil", tc.metric, got, found, err, tc.want, tc.found)
			}
		})
	}
	for _, bad := range []string{"x{a=\"b\" 1\n", "x{a=\"b\"}\n", "x{a=\"b\"} one\n"} {
		if _, _, err := parseCounter(strings.NewReader(bad), "x"); err == nil {
			t.Errorf("parseCounter(%q): no error", bad)
		}
	}
}

func TestNotController(t *testing.T) {
	tests := []struct {
		key  requestKey
		want bool
	}{
		{requestKey{"PATCH", "pods", "status"}, true}, // kwok
		{requestKey{"PUT", "leases", ""}, true},       // kwok
		{requestKey{"POST", "jobs", ""}, true},        // the benchmark
		{requestKey{"WATCH", "jobs", ""}, true},       // the benchmark
		{requestKey{"PATCH", "pods", ""}, false},      // finalizer removal
		{requestKey{"PUT", "jobs", "status"}, false},  // status updates
		{requestKey{"POST", "events", ""}, false},     // events
		{requestKey{"LIST", "jobs", ""}, false},       // informer
	}
	for _, tt := range tests {
		if got := notController(tt.key); got != tt.want {
			t.Errorf("notController(%v) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

func TestParseProc(t *testing.T) {
	// The command name holds a space and a parenthesis; utime 250 and stime 50 ticks.
	stat := "1234 (kube (ctl) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 1000 200"
	if got, err := parseStatCPU(stat); err != nil || got != 3 {
		t.Errorf("parseStatCPU = %v, %v, want 3", got, err)
	}
	if _, err := parseStatCPU("1234 (x) S 1"); err == nil {
		t.Error("parseStatCPU of a short line: no error")
	}
	status := "Name:\tkwok\nVmPeak:\t  999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n"
	if got, err := parseStatusHWM(status); err != nil || got != 2048<<10 {
		t.Errorf("parseStatusHWM = %v, %v, want %d", got, err, 2048<<10)
	}
	if _, err := parseStatusHWM("Name:\tx\n"); err == nil {
		t.Error("parseStatusHWM without VmHWM: no error")
	}
}

func TestControllerArgs(t *testing.T) {
	limits := qps{QPS: 500, Burst: 1000}
	kcm := controller{Name: "kcm", ContentType: "application/json"}
	got := strings.Join(kcm.args("/k", limits, 4321, 0), " ")
	for _, want := range []string{"--controllers job", "--kube-api-qps 500", "--kube-api-burst 1000", "--bind-address 127.0.0.1", "--secure-port 4321", "--kube-api-content-type application/json", "--leader-elect=false"} {
		if !strings.Contains(got, want) {
			t.Errorf("kcm args %q: no %q", got, want)
		}
	}
	jobkit := controller{Name: "jobkit", ManagedBy: managedByJobkit, ContentType: "application/json"}
	got = strings.Join(jobkit.args("/k", limits, 4321, 0), " ")
	for _, want := range []string{"--kube-api-qps 500", "--kube-api-burst 1000", "--metrics-bind-address 127.0.0.1:0", "--health-probe-bind-address 127.0.0.1:4321", "--workers 5", "--kube-api-content-type application/json"} {
		if !strings.Contains(got, want) {
			t.Errorf("jobkit args %q: no %q", got, want)
		}
	}
	if strings.Contains(got, "--profiling") {
		t.Errorf("jobkit args without Profile %q: --profiling", got)
	}
	if got := strings.Join(kcm.args("/k", limits, 4321, 0), " "); !strings.Contains(got, "--authorization-always-allow-paths /healthz,/readyz,/livez,/metrics") || strings.Contains(got, "pprof") {
		t.Errorf("kcm args without Profile %q: want /metrics allowed, /debug/pprof/ not", got)
	}
	kcm.Profile, jobkit.Profile = true, true
	if got := strings.Join(kcm.args("/k", limits, 4321, 0), " "); !strings.Contains(got, "--authorization-always-allow-paths /healthz,/readyz,/livez,/metrics,/debug/pprof/*") {
		t.Errorf("kcm args with Profile %q: /debug/pprof/ not allowed", got)
	}
	got = strings.Join(jobkit.args("/k", limits, 4321, 5432), " ")
	for _, want := range []string{"--profiling", "--metrics-bind-address 127.0.0.1:5432"} {
		if !strings.Contains(got, want) {
			t.Errorf("jobkit args with Profile %q: no %q", got, want)
		}
	}
	jobkit.Extra = []string{"--kube-api-max-in-flight=200"}
	if args := jobkit.args("/k", limits, 4321, 0); args[len(args)-1] != "--kube-api-max-in-flight=200" {
		t.Errorf("jobkit args with Extra %q: not last", args)
	}
}

func TestSummarize(t *testing.T) {
	c, _ := parseCase("indexed-10")
	post := requestKey{Verb: "POST", Resource: "pods"}
	get := requestKey{Verb: "GET", Resource: "jobs"}
	rs := []result{
		{Case: c, Duration: 3e9, CPU: 1, PeakRSS: 10 << 20, Requests: requests{post: 10, get: 1}, OtherCPU: map[string]float64{"kube-apiserver": 5}},
		{Case: c, Duration: 1e9, CPU: 3, PeakRSS: 30 << 20, Requests: requests{post: 12}, OtherCPU: map[string]float64{"kube-apiserver": 4}},
		{Case: c, Duration: 2e9, CPU: 2, PeakRSS: 20 << 20, Requests: requests{post: 11, get: 3}, OtherCPU: map[string]float64{"kube-apiserver": 6}},
	}
	want := summary{Rounds: 3, Duration: 2, Writes: 11, Reads: 1, CPU: 2, RSS: 20, API: 5, Requests: requests{post: 11, get: 1}}
	if diff := cmp.Diff(want, summarize(rs)); diff != "" {
		t.Errorf("summarize (-want +got):\n%s", diff)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4 1 3 2) = %v, want 2.5", got)
	}
	if got := median(nil); got != 0 {
		t.Errorf("median(nil) = %v, want 0", got)
	}
}

func TestResultLine(t *testing.T) {
	c, _ := parseCase("indexed-10")
	r := result{Case: c, Controller: "jobkit", Limits: qps{QPS: 500, Burst: 1000}, Duration: 2e9, CPU: 1.5, Syncs: 7,
		Requests:      requests{{Verb: "POST", Resource: "pods"}: 10},
		OtherRequests: requests{{Verb: "PATCH", Resource: "pods", Subresource: "status"}: 20, {Verb: "GET", Resource: "nodes"}: 3},
		OtherCPU:      map[string]float64{"kube-apiserver": 4}}
	got := r.line()
	for _, want := range []string{"indexed-10", "jobkit", "2.0s", "cpu=1.5s", "syncs=7", "apiserver=4.0s", "POST pods=10", "\n  writes of others: PATCH pods/status=20"} {
		if !strings.Contains(got, want) {
			t.Errorf("line() = %q: no %q", got, want)
		}
	}
	if strings.Contains(got, "GET nodes") {
		t.Errorf("line() = %q: lists another's read", got)
	}
	r.OtherRequests = nil
	if got := r.line(); strings.Contains(got, "others") || strings.Contains(got, "CPU in the profile") {
		t.Errorf("line() without others' writes or a profile = %q", got)
	}
	r.CPUParts = map[string]float64{"syncs": 0.5}
	if got := r.line(); !strings.Contains(got, "\n  CPU in the profile 0.50s: syncs 0.50s") {
		t.Errorf("line() of a profiled run = %q: no CPU by part", got)
	}
}
