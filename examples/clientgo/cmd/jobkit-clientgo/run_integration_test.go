package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/examples/internal/cmdtest"
)

// TestRunWithLeaderElection runs the command's wiring against a real API server from
// a kubeconfig file: it takes the Lease, then creates the pods of a Job managed by
// its name, and releases the Lease when stopped.
func TestRunWithLeaderElection(t *testing.T) {
	cfg := apiServer(t)
	kubeconfig := cmdtest.WriteKubeconfig(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)

	o, err := parseFlags([]string{"--kubeconfig=" + kubeconfig, "--workers=2", "--leader-elect", "--leader-elect-namespace=default", "--leader-elect-name=jobkit-test",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()

	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wired"},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To(clientgo.DefaultName),
			Parallelism: ptr.To[int32](2),
			Completions: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
	if _, err := cs.BatchV1().Jobs("default").Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var holder string
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=wired"})
		lease, lerr := cs.CoordinationV1().Leases("default").Get(t.Context(), "jobkit-test", metav1.GetOptions{})
		if err == nil && lerr == nil && len(pods.Items) == 2 {
			holder = ptr.Deref(lease.Spec.HolderIdentity, "")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no lease and two pods after 30s: pods %v (%v), lease error %v", len(pods.Items), err, lerr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if holder == "" {
		t.Errorf("the Lease has no holder while the controller runs")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run() did not return after cancellation")
	}
	lease, err := cs.CoordinationV1().Leases("default").Get(t.Context(), "jobkit-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := ptr.Deref(lease.Spec.HolderIdentity, ""); h != "" {
		t.Errorf("Lease holder = %q after a clean stop, want released", h)
	}
}

// TestRunServesMetricsAndProbes runs the command against a real API server and, once
// a Job it manages has completed, finds the job_controller_* counters moved on
// /metrics and /healthz and /readyz answering 200.
func TestRunServesMetricsAndProbes(t *testing.T) {
	cfg := apiServer(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metrics"}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	metricsAddr, probeAddr := cmdtest.FreeAddr(t), cmdtest.FreeAddr(t)
	o, err := parseFlags([]string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, cfg), "--workers=2",
		"--metrics-bind-address=" + metricsAddr, "--health-probe-bind-address=" + probeAddr}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	})
	cmdtest.Check(t, cs, ns.Name, clientgo.DefaultName, metricsAddr, probeAddr)
}

var (
	envOnce sync.Once
	env     *envtest.Environment
	envCfg  *rest.Config
	envErr  error
)

// apiServer returns the configuration of the API server the tests of this package
// share, starting it on first use; TestMain stops it.
func apiServer(t *testing.T) *rest.Config {
	t.Helper()
	envOnce.Do(func() { env, envCfg, envErr = testenv.Start() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return envCfg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

// With --metrics-secure, /metrics is served over HTTPS by controller-runtime's
// metrics server to the clients the API server authenticates and authorizes
// (reviewFilter); plain HTTP serves nothing there.
func TestRunSecureMetrics(t *testing.T) {
	cfg := apiServer(t)
	metricsAddr := cmdtest.FreeAddr(t)
	o, err := parseFlags([]string{"--kubeconfig=" + cmdtest.WriteKubeconfig(t, cfg), "--workers=1", "--managed-by=example.com/secure-metrics",
		"--metrics-bind-address=" + metricsAddr, "--metrics-secure", "--health-probe-bind-address=0"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		// The metrics may be served before the caches have synced (a loaded
		// machine): run then ends with the context's cause, which is no failure here.
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run() = %v after cancellation, want nil", err)
		}
	})
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // self-signed certificate
	code := 0
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := c.Get("https://" + metricsAddr + "/metrics")
		if err != nil {
			continue
		}
		resp.Body.Close()
		code = resp.StatusCode
		break
	}
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Fatalf("GET https://%s/metrics without a token = %d, want 401 or 403", metricsAddr, code)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + metricsAddr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("GET /metrics over plain HTTP = 200, want no plain HTTP")
		}
	}
	// A service account bound to get /metrics is served; one without the binding
	// is refused (TokenReview, then SubjectAccessReview, by the API server).
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx2 := t.Context()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx2, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx2, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "default", Name: "scraper"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	getWith := func(sa string) (int, string) {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx2, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tok, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx2, sa, &authnv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+tok.Status.Token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := getWith("scraper"); code != http.StatusOK || !strings.Contains(body, "job_controller_") {
		t.Errorf("GET /metrics with the token of a service account bound to get it = %d, want 200 with job_controller_*: %.200s", code, body)
	}
	if code, _ := getWith("stranger"); code != http.StatusForbidden {
		t.Errorf("GET /metrics with the token of a service account without the binding = %d, want 403", code)
	}
}
