package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/examples/internal/testenv"
)

// TestRunWithLeaderElection runs the command's wiring against a real API server from
// a kubeconfig file: it takes the Lease, then creates the pods of a Job managed by
// its name, and releases the Lease when stopped.
func TestRunWithLeaderElection(t *testing.T) {
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	kubeconfig := writeKubeconfig(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)

	o, err := parseFlags([]string{"--kubeconfig=" + kubeconfig, "--workers=2", "--leader-elect", "--leader-elect-namespace=default", "--leader-elect-name=jobkit-test"}, os.Stderr)
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

// writeKubeconfig writes cfg (envtest's client certificate) as a kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
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
