package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/jobkit/jobkit/cmd/jobkit/explain"
	"github.com/jobkit/jobkit/cmd/jobkit/internal/testenv"
	"github.com/jobkit/jobkit/finalizers"
)

// TestLive explains a Job read from a real API server: a Job with a foreign
// managedBy (so no other controller touches it) and pods in several states,
// created and written through the API server, which validates every object.
func TestLive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kube-apiserver and etcd")
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	const ns = "explain"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	podSpec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}
	job, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "work"},
		Spec: batchv1.JobSpec{
			ManagedBy:   ptr.To("example.com/foreign"),
			Completions: ptr.To[int32](4),
			Parallelism: ptr.To[int32](2),
			Template:    corev1.PodTemplateSpec{Spec: podSpec},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	job.Status = batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0), StartTime: &start}
	if job, err = cs.BatchV1().Jobs(ns).UpdateStatus(ctx, job, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	owner := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	finished := metav1.NewTime(start.Add(time.Minute))
	makePod := func(name string, owned bool, status corev1.PodStatus) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: job.Spec.Template.Labels},
			Spec:       podSpec,
		}
		if owned {
			pod.OwnerReferences = owner
			pod.Finalizers = []string{finalizers.Name}
		}
		createPod(t, cs, ns, pod, status)
	}
	terminated := func(code int32) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: "main", Image: "busybox", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: start, FinishedAt: finished}}}}
	}
	makePod("work-running", true, corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}})
	makePod("work-succeeded", true, corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: terminated(0)})
	makePod("work-failed", true, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: terminated(2)})
	makePod("work-orphan", false, corev1.PodStatus{Phase: corev1.PodRunning})
	// A pod of an earlier Job of the same name, deleted while the pod kept the
	// tracking finalizer (no garbage collector runs here).
	earlier := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "work-earlier", Labels: map[string]string{batchv1.JobNameLabel: "work"},
			Finalizers:      []string{finalizers.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "work", UID: "0e0e0e0e-0000-0000-0000-000000000000", Controller: ptr.To(true)}}},
		Spec: podSpec,
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, earlier, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A pod in the namespace that is not the Job's: never read.
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Labels: map[string]string{"app": "web"}}, Spec: podSpec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	kubeconfig := func(t *testing.T, user envtest.User) string {
		t.Helper()
		u, err := env.AddUser(user, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := u.KubeConfig()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	admin := kubeconfig(t, envtest.User{Name: "admin", Groups: []string{"system:masters"}})
	nobody := kubeconfig(t, envtest.User{Name: "nobody"})

	t.Run("explanation", func(t *testing.T) {
		r := explainJSON(t, "work", "-n", ns, "--kubeconfig", admin, "--now=2026-03-01T10:05:00Z")
		if r.Controller != "example.com/foreign" {
			t.Errorf("controller = %q, want the Job's managedBy example.com/foreign", r.Controller)
		}
		classes, decisions := podClasses(r), decisionList(r)
		wantClasses := map[string][]explain.Class{
			"work-running":   {explain.ClassActive, explain.ClassReady},
			"work-succeeded": {explain.ClassSucceeded, explain.ClassUncounted},
			"work-failed":    {explain.ClassFailed, explain.ClassUncounted},
			"work-orphan":    {explain.ClassOrphan, explain.ClassActive},
			"work-earlier":   {explain.ClassIgnored},
		}
		if diff := cmp.Diff(wantClasses, classes); diff != "" {
			t.Errorf("classes (-want +got):\n%s", diff)
		}
		wantDecisions := []string{"adopt work-orphan", "record ", "remove-finalizer work-failed", "remove-finalizer work-succeeded"}
		if diff := cmp.Diff(wantDecisions, decisions); diff != "" {
			t.Errorf("decisions (-want +got):\n%s", diff)
		}
		changes := map[string]string{}
		for _, c := range r.StatusChanges {
			changes[c.Field] = c.From + " -> " + c.To
		}
		wantChanges := map[string]string{"status.active": "1 -> 2", "status.succeeded": "0 -> 1", "status.failed": "0 -> 1"}
		if diff := cmp.Diff(wantChanges, changes); diff != "" {
			t.Errorf("status changes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"all 2 wanted pod(s) are active (parallelism 2): waiting for them to finish"}, r.Blockers); diff != "" {
			t.Errorf("blockers (-want +got):\n%s", diff)
		}
		var diags []string
		for _, d := range r.Diagnostics {
			diags = append(diags, d.Kind+": "+d.Message)
		}
		wantDiags := []string{explain.DiagFinalizerJobDeleted + ": pod work-earlier keeps the tracking finalizer of a deleted Job work (uid 0e0e0e0e-0000-0000-0000-000000000000): controlling Job no longer exists; the orphan cleanup of the Job controller removes it"}
		if diff := cmp.Diff(wantDiags, diags); diff != "" {
			t.Errorf("diagnostics (-want +got):\n%s", diff)
		}
	})
	t.Run("owner kind", func(t *testing.T) { testLiveOwner(t, cfg, admin, nobody) })
	t.Run("as another controller", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"explain", "work", "--namespace", ns, "--kubeconfig", admin, "--managed-by", batchv1.JobControllerName}, &stdout, &stderr)
		if code != exitOK {
			t.Fatalf("exit code %d, stderr:\n%s", code, stderr.String())
		}
		want := `The controller skips this Job: spec.managedBy is "example.com/foreign", not "kubernetes.io/job-controller"`
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, stdout.String())
		}
	})
	errorCases := []struct {
		name, kubeconfig, job, wantStderr string
	}{
		{name: "missing job", kubeconfig: admin, job: "nothere", wantStderr: "jobkit explain: job explain/nothere: not found\n"},
		{name: "no access", kubeconfig: nobody, job: "work", wantStderr: "jobkit explain: job explain/work: no access (forbidden): "},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(ctx, []string{"explain", tt.job, "-n", ns, "--kubeconfig", tt.kubeconfig}, &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			if !strings.HasPrefix(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to start with %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// explainJSON runs `jobkit explain ARGS -o json` and returns its report.
func explainJSON(t *testing.T, args ...string) *explain.Report {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(append([]string{"explain"}, args...), "-o", "json"), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit code %d, stderr:\n%s", code, stderr.String())
	}
	var r explain.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("output is not a Report: %v\n%s", err, stdout.String())
	}
	return &r
}

// podClasses maps each pod of r to its classes.
func podClasses(r *explain.Report) map[string][]explain.Class {
	out := map[string][]explain.Class{}
	for _, p := range r.Pods {
		out[p.Name] = p.Classes
	}
	return out
}

// decisionList writes each decision of r as "ACTION POD".
func decisionList(r *explain.Report) []string {
	var out []string
	for _, d := range r.Decisions {
		out = append(out, d.Action+" "+d.Pod)
	}
	return out
}

// createPod creates pod in namespace ns and writes its status.
func createPod(t *testing.T, cs kubernetes.Interface, ns string, pod *corev1.Pod, status corev1.PodStatus) {
	t.Helper()
	ctx := context.Background()
	created, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	created.Status = status
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of pod %s: %v", pod.Name, err)
	}
}
