package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestParseGroupFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		cases   int
		sides   int
	}{
		{name: "all sides", args: []string{"--kcm", "k", "--jobkit", "j", "--jobset", "s", "--jobkit-jobset", "js", "--trainingjob", "t"}, cases: 3, sides: 3},
		{name: "jobkit only", args: []string{"--kcm", "k", "--jobkit", "j", "--jobkit-jobset", "js", "--sides", "jobkit", "--cases", "restart-4x5"}, cases: 1, sides: 1},
		{name: "missing JobSet", args: []string{"--kcm", "k", "--sides", "jobset"}, wantErr: "--jobset is required"},
		{name: "bad side", args: []string{"--kcm", "k", "--sides", "volcano"}, wantErr: `--sides: "volcano"`},
		{name: "bad case", args: []string{"--kcm", "k", "--sides", "jobset", "--jobset", "s", "--cases", "leader-65"}, wantErr: `group case "leader-65"`},
		{name: "bad qps", args: []string{"--kcm", "k", "--sides", "jobset", "--jobset", "s", "--qps", "fast"}, wantErr: `qps "fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseGroupFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(o.cases) != tt.cases || len(o.sides) != tt.sides {
				t.Errorf("%d cases and %d sides, want %d and %d", len(o.cases), len(o.sides), tt.cases, tt.sides)
			}
		})
	}
}

func TestGroupCaseObjects(t *testing.T) {
	tests := []struct {
		name          string
		c             groupCase
		managedBy     string
		wantRJobs     []string // name=replicas
		wantRestarts  bool
		wantWorkers   int64
		wantLauncher  bool
		wantOwnerPods int
	}{
		{name: "leader", c: groupCases["leader-64"], wantRJobs: []string{"leader=1", "workers=1"}, wantWorkers: 64, wantLauncher: true, wantOwnerPods: 65},
		{name: "group", c: groupCases["group-100x10"], managedBy: managedByJobkit, wantRJobs: []string{"workers=100"}, wantWorkers: 1000, wantOwnerPods: 1000},
		{name: "restart", c: groupCases["restart-1000"], wantRJobs: []string{"workers=100"}, wantRestarts: true, wantWorkers: 1000, wantLauncher: true, wantOwnerPods: 1001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := tt.c.jobSet("g", "ns", tt.managedBy, "kwok-0")
			if err != nil {
				t.Fatal(err)
			}
			rjobs, _, _ := unstructured.NestedSlice(js.Object, "spec", "replicatedJobs")
			var got []string
			for _, x := range rjobs {
				m := x.(map[string]any)
				got = append(got, m["name"].(string)+"="+strconv.FormatInt(m["replicas"].(int64), 10))
				mb, found, _ := unstructured.NestedString(m, "template", "spec", "managedBy")
				if found != (tt.managedBy != "") || mb != tt.managedBy {
					t.Errorf("%s: child managedBy %q (set %v), want %q", m["name"], mb, found, tt.managedBy)
				}
				node, _, _ := unstructured.NestedString(m, "template", "spec", "template", "spec", "nodeName")
				if node != "kwok-0" {
					t.Errorf("%s: nodeName %q, want kwok-0 (no scheduler runs)", m["name"], node)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.wantRJobs, ",") {
				t.Errorf("replicatedJobs %v, want %v", got, tt.wantRJobs)
			}
			for _, path := range [][]string{{"spec", "successPolicy", "operator"}, {"spec", "startupPolicy", "startupPolicyOrder"}} {
				if _, found, _ := unstructured.NestedString(js.Object, path...); !found {
					t.Errorf("%v not set: JobSet's webhook default must be written out", path)
				}
			}
			if _, found, _ := unstructured.NestedInt64(js.Object, "spec", "failurePolicy", "maxRestarts"); found != tt.wantRestarts {
				t.Errorf("failurePolicy.maxRestarts set %v, want %v", found, tt.wantRestarts)
			}
			tj, err := tt.c.trainingJob("g", "ns", "kwok-0")
			if err != nil {
				t.Fatal(err)
			}
			if w, _, _ := unstructured.NestedInt64(tj.Object, "spec", "workers"); w != tt.wantWorkers {
				t.Errorf("workers %d, want %d", w, tt.wantWorkers)
			}
			if _, found, _ := unstructured.NestedMap(tj.Object, "spec", "launcher"); found != tt.wantLauncher {
				t.Errorf("launcher set %v, want %v", found, tt.wantLauncher)
			}
			if n := tt.c.ownerPods(); n != tt.wantOwnerPods {
				t.Errorf("ownerPods %d, want %d", n, tt.wantOwnerPods)
			}
		})
	}
}

func TestGroupNotController(t *testing.T) {
	tests := []struct {
		k    requestKey
		want bool
	}{
		{requestKey{Verb: "PATCH", Resource: "pods", Subresource: "status"}, true},
		{requestKey{Verb: "POST", Resource: "pods"}, false},
		{requestKey{Verb: "DELETE", Resource: "pods"}, false},
		{requestKey{Verb: "POST", Resource: "jobsets"}, true},
		{requestKey{Verb: "WATCH", Resource: "trainingjobs"}, true},
		{requestKey{Verb: "PUT", Resource: "jobsets", Subresource: "status"}, false},
		{requestKey{Verb: "PATCH", Resource: "trainingjobs", Subresource: "status"}, false},
		{requestKey{Verb: "POST", Resource: "jobs"}, false},
		{requestKey{Verb: "POST", Resource: "services"}, false},
		{requestKey{Verb: "POST", Resource: "events"}, false},
		{requestKey{Verb: "PUT", Resource: "leases"}, true},
		{requestKey{Verb: "WATCH", Resource: "configmaps"}, true},
	}
	for _, tt := range tests {
		if got := groupNotController(tt.k); got != tt.want {
			t.Errorf("groupNotController(%v) = %v, want %v", tt.k, got, tt.want)
		}
	}
}

func TestPodWatchCounts(t *testing.T) {
	pod := func(name, attempt string, phase corev1.PodPhase, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{attemptLabel: attempt}}, Status: corev1.PodStatus{Phase: phase}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	pw := &podWatch{pods: map[string]*corev1.Pod{
		"a": pod("a", "0", corev1.PodRunning, false),
		"b": pod("b", "0", corev1.PodRunning, true),
		"c": pod("c", "1", corev1.PodRunning, false),
		"d": pod("d", "1", corev1.PodPending, false),
		"e": pod("e", "", corev1.PodRunning, false),
	}}
	if n := pw.count(0, corev1.PodRunning); n != 2 {
		t.Errorf("count(0, Running) = %d, want 2 (a and e: no label is attempt 0; b is being deleted)", n)
	}
	if n := pw.count(1, corev1.PodRunning); n != 1 {
		t.Errorf("count(1, Running) = %d, want 1", n)
	}
	if n := pw.attemptLeft(0); n != 3 {
		t.Errorf("attemptLeft(0) = %d, want 3", n)
	}
	want := "pods: attempt 0 Running deleting=1, attempt 0 Running=2, attempt 1 Pending=1, attempt 1 Running=1"
	if s := pw.summary(); s != want {
		t.Errorf("summary = %q, want %q", s, want)
	}
}

func TestFactsDiff(t *testing.T) {
	tests := []struct {
		a, b []string
		want string
	}{
		{[]string{"x", "y"}, []string{"x", "y"}, ""},
		{[]string{"conditions: "}, []string{"conditions: RestartingJobSet=False(JobsReady)"}, "JobSet: conditions: ; jobkit: conditions: RestartingJobSet=False(JobsReady)"},
		{[]string{"x", "z"}, []string{"x"}, "JobSet: z"},
	}
	for _, tt := range tests {
		if got := factsDiff(tt.a, tt.b); got != tt.want {
			t.Errorf("factsDiff(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestJobSetProcConfig(t *testing.T) {
	dir := t.TempDir()
	args, err := jobsetProc("jobset").Args("/k/kubeconfig", qps{QPS: 50, Burst: 100}, 31234, dir)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--config " + filepath.Join(dir, "config.yaml"), "--kubeconfig /k/kubeconfig", "--kube-api-qps 50", "--kube-api-burst 100"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args %q lack %q", joined, want)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Kind                   string
		LeaderElection         struct{ LeaderElect bool }
		InternalCertManagement struct{ Enable bool }
		Webhook                struct {
			Host    string
			Port    int
			CertDir string
		}
		Metrics struct{ BindAddress string }
		Health  struct{ HealthProbeBindAddress string }
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("config.yaml: %v\n%s", err, raw)
	}
	if cfg.Kind != "Configuration" || cfg.LeaderElection.LeaderElect || cfg.InternalCertManagement.Enable ||
		cfg.Webhook.Host != "127.0.0.1" || cfg.Webhook.Port == 0 || cfg.Metrics.BindAddress != "0" ||
		cfg.Health.HealthProbeBindAddress != "127.0.0.1:31234" {
		t.Errorf("config.yaml:\n%s", raw)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(cfg.Webhook.CertDir, "tls.crt"), filepath.Join(cfg.Webhook.CertDir, "tls.key"))
	if err != nil {
		t.Fatalf("the webhook certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("the webhook certificate does not name 127.0.0.1: %v", err)
	}
}
