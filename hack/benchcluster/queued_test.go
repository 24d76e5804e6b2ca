package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

func TestParseQueuedFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		sides   int
		want    queuedCase
	}{
		{name: "all sides", args: []string{"--kueue", "q", "--kcm", "k", "--jobkit", "j", "--trainingjob", "t"}, sides: 3, want: queuedCase{Owners: 50, Pods: 20, Admitted: 10}},
		{name: "jobkit only, smaller", args: []string{"--kueue", "q", "--jobkit", "j", "--sides", "jobkit", "--owners", "4", "--pods", "2", "--admitted", "1"}, sides: 1, want: queuedCase{Owners: 4, Pods: 2, Admitted: 1}},
		{name: "no Kueue", args: []string{"--kcm", "k", "--sides", "kcm"}, wantErr: "--kueue is required"},
		{name: "missing trainingjob", args: []string{"--kueue", "q", "--sides", "owner"}, wantErr: "--trainingjob is required"},
		{name: "bad side", args: []string{"--kueue", "q", "--sides", "volcano"}, wantErr: `--sides: "volcano"`},
		{name: "no owners", args: []string{"--kueue", "q", "--kcm", "k", "--sides", "kcm", "--owners", "0"}, wantErr: "--owners=0"},
		{name: "no quota", args: []string{"--kueue", "q", "--kcm", "k", "--sides", "kcm", "--admitted", "-1"}, wantErr: "--admitted=-1"},
		{name: "bad qps", args: []string{"--kueue", "q", "--kcm", "k", "--sides", "kcm", "--qps", "fast"}, wantErr: `qps "fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseQueuedFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(o.sides) != tt.sides || o.c != tt.want {
				t.Errorf("%d sides, case %+v; want %d, %+v", len(o.sides), o.c, tt.sides, tt.want)
			}
		})
	}
}

func TestQueuedCaseObjects(t *testing.T) {
	c := queuedCase{Owners: 50, Pods: 20, Admitted: 10}
	if got := c.Name(); got != "queued-50x20-q10" {
		t.Errorf("Name() = %q", got)
	}
	for _, managedBy := range []string{"", managedByJobkit} {
		j := c.job("q0-1", "queued", managedBy, "kwok-node-0")
		if !*j.Spec.Suspend || *j.Spec.Completions != 20 || *j.Spec.Parallelism != 20 {
			t.Errorf("job: suspend %v, completions %d, parallelism %d; want true, 20, 20", *j.Spec.Suspend, *j.Spec.Completions, *j.Spec.Parallelism)
		}
		if j.Labels[queueNameLabel] != queuedLocalQueue || j.Labels[queuedLabel] != c.Name() {
			t.Errorf("job labels = %v", j.Labels)
		}
		if got := j.Spec.ManagedBy; (managedBy == "") != (got == nil) || (got != nil && *got != managedBy) {
			t.Errorf("managedBy = %v, want %q", got, managedBy)
		}
		cpu := j.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
		if cpu.Cmp(resource.MustParse("1")) != 0 || j.Spec.Template.Labels[queuedLabel] != c.Name() {
			t.Errorf("pod template: cpu %s, labels %v", cpu.String(), j.Spec.Template.Labels)
		}
	}
	u, err := c.trainingJob("q2-0", "queued", "kwok-node-0")
	if err != nil {
		t.Fatal(err)
	}
	workers, _, _ := unstructured.NestedInt64(u.Object, "spec", "workers")
	suspend, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
	if workers != 20 || !suspend || u.GetLabels()[queueNameLabel] != queuedLocalQueue {
		t.Errorf("trainingJob: workers %d, suspend %v, labels %v", workers, suspend, u.GetLabels())
	}
	if _, ok := u.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("trainingJob metadata has a creationTimestamp")
	}
	objs := c.kueueObjects("queued")
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
	}
	if got := strings.Join(kinds, ","); got != "ResourceFlavor,ClusterQueue,LocalQueue" {
		t.Errorf("kinds = %s", got)
	}
	groups, _, _ := unstructured.NestedSlice(objs[1].Object, "spec", "resourceGroups")
	flavor := groups[0].(map[string]any)["flavors"].([]any)[0].(map[string]any)
	quota := flavor["resources"].([]any)[0].(map[string]any)["nominalQuota"]
	if flavor["name"] != queuedFlavor || quota != "200" {
		t.Errorf("ClusterQueue flavor %v, CPU quota %v; want %s, 200 (10 owners of 20 pods)", flavor["name"], quota, queuedFlavor)
	}
	if objs[2].GetNamespace() != "queued" || objs[0].GetNamespace() != "" {
		t.Errorf("namespaces: LocalQueue %q, ResourceFlavor %q", objs[2].GetNamespace(), objs[0].GetNamespace())
	}
	if cq, _, _ := unstructured.NestedString(objs[2].Object, "spec", "clusterQueue"); cq != queuedClusterQueue {
		t.Errorf("LocalQueue's clusterQueue = %q", cq)
	}
}

func TestKueueConfig(t *testing.T) {
	var cfg map[string]any
	if err := yaml.UnmarshalStrict([]byte(kueueConfig(9443, "/tmp/certs", 8081, qps{QPS: 500, Burst: 1000})), &cfg); err != nil {
		t.Fatal(err)
	}
	get := func(path ...string) any {
		var v any = cfg
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"kind"}, "Configuration"},
		{[]string{"internalCertManagement", "enable"}, false},
		{[]string{"leaderElection", "leaderElect"}, false},
		{[]string{"webhook", "host"}, "127.0.0.1"},
		{[]string{"webhook", "port"}, float64(9443)},
		{[]string{"webhook", "certDir"}, "/tmp/certs"},
		{[]string{"metrics", "bindAddress"}, "0"},
		{[]string{"health", "healthProbeBindAddress"}, "127.0.0.1:8081"},
		{[]string{"clientConnection", "qps"}, float64(500)},
		{[]string{"featureGates", "VisibilityOnDemand"}, false},
		{[]string{"manageJobsWithoutQueueName"}, false},
	}
	for _, c := range checks {
		if got := get(c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}
	fw := get("integrations", "frameworks").([]any)
	ext := get("integrations", "externalFrameworks").([]any)
	if len(fw) != 1 || fw[0] != "batch/job" || len(ext) != 1 || ext[0] != trainingJobKueueFramework {
		t.Errorf("integrations: frameworks %v, externalFrameworks %v", fw, ext)
	}
}

func TestAdmissionRate(t *testing.T) {
	start := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name     string
		admitted map[string]time.Time
		want     float64
	}{
		{name: "none", want: 0},
		{name: "ten in two seconds", admitted: map[string]time.Time{"a": at(0.5), "b": at(1), "c": at(2)}, want: 1.5},
		{name: "at the start", admitted: map[string]time.Time{"a": start}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := admissionRate(start, tt.admitted); got != tt.want {
				t.Errorf("admissionRate = %v, want %v", got, tt.want)
			}
		})
	}
}

// workload is a Workload named name of pods pods, reclaimable of them reclaimable,
// with the conditions true.
func workload(name string, pods, reclaimable int64, conds ...string) *unstructured.Unstructured {
	var cs []any
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c, "status": "True"})
	}
	cs = append(cs, map[string]any{"type": "PodsReady", "status": "False"})
	status := map[string]any{"conditions": cs}
	if reclaimable > 0 {
		status["reclaimablePods"] = []any{map[string]any{"name": "main", "count": reclaimable}}
	}
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name},
		"spec":   map[string]any{"podSets": []any{map[string]any{"name": "main", "count": pods}}},
		"status": status}}
}

func TestAdmissionTracker(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	tr := newAdmissionTracker()
	steps := []struct {
		w        *unstructured.Unstructured
		admitted int
		inUse    int64
		peak     int64
	}{
		{workload("a", 20, 0), 0, 0, 0},
		{workload("a", 20, 0, "QuotaReserved", "Admitted"), 1, 20, 20},
		{workload("b", 20, 0, "QuotaReserved", "Admitted"), 2, 40, 40},
		{workload("a", 20, 20, "QuotaReserved", "Admitted"), 2, 20, 40}, // a's pods succeeded: reclaimable
		{workload("c", 20, 0, "QuotaReserved", "Admitted"), 3, 40, 40},  // admitted before a finished
		{workload("a", 20, 20, "QuotaReserved", "Admitted", "Finished"), 3, 40, 40},
		{workload("c", 20, 0, "QuotaReserved", "Admitted"), 3, 40, 40}, // seen again
		{workload("d", 20, 0, "QuotaReserved", "Admitted"), 4, 60, 60},
		{workload("b", 20, 5, "QuotaReserved", "Admitted"), 4, 55, 60},
	}
	for i, s := range steps {
		tr.observe(s.w, t0.Add(time.Duration(i)*time.Second))
		var inUse int64
		for _, n := range tr.inUse {
			inUse += n
		}
		if len(tr.admitted) != s.admitted || inUse != s.inUse || tr.peak != s.peak {
			t.Errorf("step %d: %d admitted, %d pods in use, peak %d; want %d, %d, %d", i, len(tr.admitted), inUse, tr.peak, s.admitted, s.inUse, s.peak)
		}
	}
	if got := tr.admitted["c"]; !got.Equal(t0.Add(4 * time.Second)) {
		t.Errorf("c admitted at %v, want its first sighting", got)
	}
}

func TestQueuedNotController(t *testing.T) {
	tests := []struct {
		k    requestKey
		want bool
	}{
		{requestKey{"PUT", "pods", "status"}, true},
		{requestKey{"PATCH", "pods", "status"}, true}, // kwok
		{requestKey{"POST", "pods", ""}, false},
		{requestKey{"POST", "jobs", ""}, true}, // the benchmark's
		{requestKey{"PUT", "jobs", "status"}, false},
		{requestKey{"PATCH", "jobs", ""}, false}, // Kueue unsuspends
		{requestKey{"POST", "trainingjobs", ""}, true},
		{requestKey{"PUT", "trainingjobs", ""}, false},
		{requestKey{"WATCH", "workloads", ""}, true},
		{requestKey{"POST", "workloads", ""}, false},
		{requestKey{"PUT", "workloads", "status"}, false},
		{requestKey{"PATCH", "clusterqueues", "status"}, false},
		{requestKey{"PUT", "leases", ""}, true},
	}
	for _, tt := range tests {
		if got := queuedNotController(tt.k); got != tt.want {
			t.Errorf("queuedNotController(%v) = %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestOwnerFinished(t *testing.T) {
	done := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	running := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	tj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "t"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}}}
	tests := []struct {
		ev         watch.Event
		name, cond string
	}{
		{watch.Event{Type: watch.Modified, Object: done}, "j", "Complete"},
		{watch.Event{Type: watch.Modified, Object: running}, "", ""},
		{watch.Event{Type: watch.Deleted, Object: done}, "", ""},
		{watch.Event{Type: watch.Modified, Object: tj}, "t", "Complete"},
	}
	for i, tt := range tests {
		if name, cond := ownerFinished(tt.ev); name != tt.name || cond != tt.cond {
			t.Errorf("%d: ownerFinished = %q, %q; want %q, %q", i, name, cond, tt.name, tt.cond)
		}
	}
}

func TestWriteQueuedTable(t *testing.T) {
	c := queuedCase{Owners: 50, Pods: 20, Admitted: 10}
	r := queuedResult{Case: c, Side: queuedJobkit, Duration: 42 * time.Second, Rate: 1.25,
		Requests: requests{{"POST", "pods", ""}: 1000, {"PUT", "workloads", "status"}: 150, {"PATCH", "jobs", ""}: 50, {"GET", "jobs", ""}: 7, {"POST", "events", ""}: 30},
		CPU:      map[string]float64{"kueue": 3.5, "jobkit": 2.25}, RSS: map[string]int64{"kueue": 64 << 20, "jobkit": 32 << 20}, APIServerCPU: 9}
	var buf bytes.Buffer
	writeQueuedTable(&buf, []queuedResult{r})
	out := buf.String()
	for _, want := range []string{
		"queued-50x20-q10: 50 owners of 20 pods, a ClusterQueue admitting 10 at a time",
		"| jobkit-clientgo (spec.managedBy) + Kueue | 42.0 | 1.25 | 1230 | 1200 | 3.5 | 2.2 | 64 | 32 | 9.0 |",
		"- jobkit-clientgo (spec.managedBy) + Kueue writes: POST pods=1000 PUT workloads/status=150 PATCH jobs=50 POST events=30",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if r.ours() != "jobkit" || (queuedResult{Side: queuedOwner}).ours() != "trainingjob" || (queuedResult{Side: queuedKCM}).ours() != "kcm" {
		t.Error("ours() names the wrong process")
	}
}

func TestReleaseVersion(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{
		{name: "unstamped", in: `{"major":"1","minor":"37","gitVersion":"v0.0.0-master+$Format:%H$"}`, want: "v1.37.0"},
		{name: "minor with a plus", in: `{"major":"1","minor":"36+","gitVersion":"v0.0.0-master"}`, want: "v1.36.0"},
		{name: "a release kept", in: `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`, want: "v1.37.2"},
		{name: "no major", in: `{"minor":"37","gitVersion":"v0.0.0-master"}`, wantErr: `major ""`},
		{name: "not JSON", in: `<html>`, wantErr: "/version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := releaseVersion([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := yaml.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			if v["gitVersion"] != tt.want || v["major"] == nil {
				t.Errorf("releaseVersion = %s, want gitVersion %s and the rest kept", out, tt.want)
			}
		})
	}
}

func TestKueueProcArgs(t *testing.T) {
	dir := t.TempDir()
	var config string
	if _, err := queuedTrainingJobProc("/t/trainingjob-controller", &config).Args("/k/kubeconfig", qps{QPS: 500, Burst: 1000}, 8082, dir); err == nil {
		t.Error("trainingjob-controller args without Kueue's manager started: want an error")
	}
	p := kueueProc("/cache/kueue-manager", &config)
	args, err := p.Args("/k/kubeconfig", qps{QPS: 500, Burst: 1000}, 8081, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Bin != "unshare" || args[0] != "-m" || args[1] != "sh" || args[4] != "/cache/kueue-manager" {
		t.Fatalf("command = %s %v", p.Bin, args)
	}
	if !strings.Contains(args[3], "lowerdir=/etc,upperdir="+dir+"/etc-upper") || !strings.HasSuffix(args[3], `exec "$0" "$@"`) {
		t.Errorf("mount script = %s", args[3])
	}
	if got := strings.Join(args[5:], " "); got != "--config "+dir+"/config.yaml --kubeconfig /k/kubeconfig --zap-log-level info" {
		t.Errorf("manager args = %s", got)
	}
	for _, f := range []string{"certs/tls.crt", "certs/tls.key", "etc-upper/kueue/metrics/certs/tls.crt", "etc-upper/kueue/metrics/certs/tls.key", "config.yaml"} {
		if _, err := os.Stat(dir + "/" + f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if config != dir+"/config.yaml" {
		t.Errorf("the configuration's path = %q, want %s/config.yaml", config, dir)
	}
	tj, err := queuedTrainingJobProc("/t/trainingjob-controller", &config).Args("/k/kubeconfig", qps{QPS: 500, Burst: 1000}, 8082, dir)
	if err != nil || len(tj) < 2 || strings.Join(tj[len(tj)-2:], " ") != "--kueue --kueue-config="+dir+"/config.yaml" {
		t.Errorf("trainingjob-controller args = %v, %v; want --kueue --kueue-config=%s/config.yaml last", tj, err, dir)
	}
}

func TestVersionProxy(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			io.WriteString(w, `{"major":"1","minor":"37","gitVersion":"v0.0.0-master+$Format:%H$"}`)
		default:
			w.Header().Set("X-Path", r.URL.Path)
			io.WriteString(w, "as it is")
		}
	}))
	defer api.Close()
	p, err := startVersionProxy(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	get := func(path string) (string, http.Header) {
		resp, err := http.Get(p.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), resp.Header
	}
	if body, _ := get("/version"); !strings.Contains(body, `"gitVersion":"v1.37.0"`) {
		t.Errorf("/version through the proxy = %s", body)
	}
	if body, h := get("/api/v1/pods"); body != "as it is" || h.Get("X-Path") != "/api/v1/pods" {
		t.Errorf("/api/v1/pods through the proxy = %q (path %q)", body, h.Get("X-Path"))
	}
	path, err := p.kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(raw), "server: "+p.url) {
		t.Errorf("kubeconfig = %s, %v", raw, err)
	}
}
