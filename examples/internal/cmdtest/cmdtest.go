// Package cmdtest checks a Job controller command (cmd/jobkit-clientgo,
// cmd/jobkit-controller-runtime) end to end against a real API server: it runs an
// Indexed Job to completion, playing the kubelet, then scrapes the command's
// /metrics and asks its /healthz and /readyz. The commands' integration tests call
// Check; it is a test helper, not an API.
package cmdtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/internal/podutil"
)

// Timeout bounds each wait of Check.
const Timeout = 30 * time.Second

// FreeAddr returns a loopback address with a port free at the time of the call, for
// a command's --metrics-bind-address and --health-probe-bind-address.
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// WantMetrics are the series Check expects, with their values, after the Job it runs
// has completed and the command has seen one Job of ExternalController added: the
// counters of the sync that created the two pods, of the two pods finishing, of the
// two indexes and of the Job finishing. Series not listed are not checked.
var WantMetrics = map[string]float64{
	`job_controller_job_pods_creation_total{reason="new",status="succeeded"}`:                                      2,
	`job_controller_job_pods_finished_total{completion_mode="Indexed",result="succeeded"}`:                         2,
	`job_controller_job_finished_indexes_total{backoffLimit="global",status="succeeded"}`:                          2,
	`job_controller_jobs_finished_total{completion_mode="Indexed",reason="CompletionsReached",result="succeeded"}`: 1,
	`job_controller_terminated_pods_tracking_finalizer_total{event="delete"}`:                                      2,
	`job_controller_jobs_by_external_controller_total{controller_name="` + ExternalController + `"}`:               1,
}

// ExternalController manages the second Job Check creates, which the command must
// leave alone and count.
const ExternalController = "example.com/other-controller"

// Check creates, in namespace ns, an Indexed Job of two completions managed by
// managedBy and a Job managed by ExternalController; plays the kubelet until the
// first completes; then polls http://metricsAddr/metrics until every series of
// WantMetrics has its value and job_controller_job_syncs_total and
// job_controller_job_sync_duration_seconds_count have moved, and asks
// http://probeAddr/healthz and /readyz for a 200.
func Check(t *testing.T, cs kubernetes.Interface, ns, managedBy, metricsAddr, probeAddr string) {
	t.Helper()
	ctx := t.Context()
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job("other", ExternalController), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job("measured", managedBy), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Job measured to complete, its pods succeeding", func() (bool, string) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=measured"})
		if err != nil {
			return false, err.Error()
		}
		for i := range pods.Items {
			if err := succeed(ctx, cs, &pods.Items[i]); err != nil {
				return false, err.Error()
			}
		}
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "measured", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d pods, status %+v", len(pods.Items), j.Status)
	})

	eventually(t, "the job_controller_* metrics", func() (bool, string) {
		got, err := Scrape(ctx, "http://"+metricsAddr+"/metrics")
		if err != nil {
			return false, err.Error()
		}
		var wrong []string
		for series, want := range WantMetrics {
			if v, ok := got[series]; !ok || v != want {
				wrong = append(wrong, fmt.Sprintf("%s = %v (present %v), want %v", series, v, ok, want))
			}
		}
		for _, name := range []string{"job_controller_job_syncs_total", "job_controller_job_sync_duration_seconds_count"} {
			if sum := Sum(got, name); sum < 1 {
				wrong = append(wrong, fmt.Sprintf("%s sums to %v, want at least 1", name, sum))
			}
		}
		slices.Sort(wrong)
		return len(wrong) == 0, strings.Join(wrong, "\n")
	})

	for _, path := range []string{"/healthz", "/readyz"} {
		eventually(t, path+" to answer 200", func() (bool, string) {
			code, body, err := get(ctx, "http://"+probeAddr+path)
			if err != nil {
				return false, err.Error()
			}
			return code == http.StatusOK, fmt.Sprintf("%d %s", code, body)
		})
	}
}

// job is an Indexed Job of two completions, both at once.
func job(name, managedBy string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			ManagedBy:      ptr.To(managedBy),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To[int32](2),
			Parallelism:    ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
}

// succeed binds pod to a node (no Node object is needed) and ends it with every
// container exiting 0, as a kubelet would; a pod that finished already is left.
func succeed(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) error {
	if podutil.IsTerminal(pod) {
		return nil
	}
	if pod.Spec.NodeName == "" {
		err := cs.CoreV1().Pods(pod.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "cmdtest-node"},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		cur.Status.Phase = corev1.PodSucceeded
		cur.Status.StartTime = &now
		cur.Status.ContainerStatuses = nil
		for _, c := range cur.Spec.Containers {
			cur.Status.ContainerStatuses = append(cur.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, Started: ptr.To(false),
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now,
				}},
			})
		}
		_, err = cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// Scrape reads a Prometheus text exposition from url into a map from series (the
// name with its labels, as written: `name{a="x",b="y"}`, or the bare name) to value.
func Scrape(ctx context.Context, url string) (map[string]float64, error) {
	code, body, err := get(ctx, url)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", url, code, body)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("GET %s: line %q: no value", url, line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("GET %s: line %q: %w", url, line, err)
		}
		series[line[:i]] = v
	}
	return series, sc.Err()
}

// Sum adds the values of every series of the metric name, whatever its labels.
func Sum(series map[string]float64, name string) float64 {
	var sum float64
	for s, v := range series {
		if s == name || strings.HasPrefix(s, name+"{") {
			sum += v
		}
	}
	return sum
}

// get returns the status code and body of a GET of url.
func get(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// WriteKubeconfig writes cfg (envtest's client certificate) as a kubeconfig file in a
// temporary directory of t, for a command's --kubeconfig.
func WriteKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// eventually polls cond until it holds, failing the test after Timeout with the last
// explanation cond gave.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s:\n%s", Timeout, what, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
