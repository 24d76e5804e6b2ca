package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// The in-memory demo runs the Job to completion with two failures of index 1 and
// prints the same lines on every run.
func TestInMemoryDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, &out, &errOut); code != 0 {
		t.Fatalf("run() = %d, want 0; stderr: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	wantLast := []string{
		"[ 39s] pod demo-1-qlf5m succeeded",
		"[ 40s] job: active=0 ready=0 succeeded=4 failed=2 completedIndexes=0-3",
		"[ 40s] condition SuccessCriteriaMet=True (CompletionsReached): Reached expected number of succeeded pods",
		"[ 40s] pod demo-1-qlf5m counted: tracking finalizer removed",
		"[ 40s] condition Complete=True (CompletionsReached): Reached expected number of succeeded pods",
		"[ 40s] done: 6 pods created, every pod counted",
	}
	if len(lines) < len(wantLast) {
		t.Fatalf("demo printed %d lines, want at least %d:\n%s", len(lines), len(wantLast), out.String())
	}
	if got := lines[len(lines)-len(wantLast):]; strings.Join(got, "\n") != strings.Join(wantLast, "\n") {
		t.Errorf("last lines of the demo:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLast, "\n"))
	}
	for _, want := range []string{
		"[  3s] pod demo-1-qkqvc failed (exit code 1)",
		"[  4s] backoff: next pod in 9s (per-index backoff of 1 indexes)",
		"[ 17s] backoff: next pod in 19s (per-index backoff of 1 indexes)",
		// A newcomer sees index 1 fail at 3s and status.failed stay 0 until 14s.
		"[ 14s] pod demo-1-qkqvc counted: tracking finalizer removed (11s after it failed: with backoffLimitPerIndex," +
			" the last failed pod of an index is counted only once its replacement exists, here demo-1-7f5x6," +
			" created after the per-index backoff; the replacement carries the index's failure count forward)",
		"[ 14s] job: active=1 ready=1 succeeded=3 failed=1 completedIndexes=0,2,3",
	} {
		if !strings.Contains(out.String(), want+"\n") {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}

	var again bytes.Buffer
	if code := run(nil, &again, &errOut); code != 0 {
		t.Fatalf("second run() = %d, want 0", code)
	}
	if again.String() != out.String() {
		t.Errorf("two runs printed different output:\n%s\n---\n%s", out.String(), again.String())
	}
}

// TestLateCountExplained feeds progress the snapshots of an index whose failed pod
// is counted when its replacement appears, and checks which counted lines say why.
func TestLateCountExplained(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	pod := func(uid, name, index string, phase corev1.PodPhase, tracked bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: name,
			Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: index}}}
		p.Status.Phase = phase
		if tracked {
			p.Finalizers = []string{batchv1.JobTrackingFinalizer}
		}
		return p
	}
	const why = " (5s after it failed: with backoffLimitPerIndex, the last failed pod of an index is counted only once its" +
		" replacement exists, here j-1-b, created after the per-index backoff; the replacement carries the index's failure count forward)"
	tests := []struct {
		name        string
		perIndex    bool
		replacement bool // index 1 gets a new pod before the failed one is counted
		wantCounted string
	}{
		{name: "per-index, replaced", perIndex: true, replacement: true, wantCounted: "[  7s] pod j-1-a counted: tracking finalizer removed" + why},
		{name: "per-index, index failed for good: no replacement", perIndex: true, wantCounted: "[  7s] pod j-1-a counted: tracking finalizer removed"},
		{name: "global backoff limit", replacement: true, wantCounted: "[  7s] pod j-1-a counted: tracking finalizer removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newProgress(&out, start)
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"}}
			if tt.perIndex {
				job.Spec.BackoffLimitPerIndex = ptr.To[int32](2)
			}
			p.Job(at(0), job)
			p.Pod(at(0), pod("a", "j-1-a", "1", corev1.PodRunning, true), false)
			p.Pod(at(2), pod("a", "j-1-a", "1", corev1.PodFailed, true), false)
			if tt.replacement {
				p.Pod(at(6), pod("b", "j-1-b", "1", corev1.PodPending, true), false)
			}
			p.Pod(at(7), pod("a", "j-1-a", "1", corev1.PodFailed, false), false)
			var got string
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Contains(line, "counted") {
					got = line
				}
			}
			if got != tt.wantCounted {
				t.Errorf("counted line = %q, want %q\noutput:\n%s", got, tt.wantCounted, out.String())
			}
		})
	}
}

func TestBadFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--no-such-flag"}, &out, &errOut); code != 2 {
		t.Errorf("run(--no-such-flag) = %d, want 2", code)
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var out, errOut bytes.Buffer
		if code := run([]string{arg}, &out, &errOut); code != 0 {
			t.Errorf("run(%s) = %d, want 0", arg, code)
		}
		if !strings.Contains(errOut.String(), "-kubeconfig") {
			t.Errorf("run(%s) printed %q, want the flags", arg, errOut.String())
		}
	}
}

// The cluster mode against a real API server, with a kubelet that plays the demo
// container through the API.
func TestClusterDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go fakeKubelet(ctx, c, "default")

	var out bytes.Buffer
	err = runOnCluster(ctx, &out, cfg, clusterOptions{
		managedBy: "demo.jobkit.dev/test", namespace: "default", image: "busybox:1.36",
		backoff: plainbackoff.Policy{Base: time.Second, Max: 2 * time.Second},
	})
	if err != nil {
		t.Fatalf("runOnCluster: %v\n%s", err, out.String())
	}
	t.Logf("cluster demo output:\n%s", out.String())
	for _, want := range []string{
		"failed (exit code 1)",
		"backoff: next pod in",
		"job: active=0 ready=0 succeeded=4 failed=2 completedIndexes=0-3",
		"condition Complete=True (CompletionsReached)",
		"done: 6 pods created, every pod counted",
		"deleted job default/jobkit-demo-",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cluster demo output lacks %q", want)
		}
	}
}

// fakeKubelet runs the pods of namespace through the API as the demo container
// would: Running, then after a while Failed (exit code 1) or Succeeded as failsNow
// decides.
func fakeKubelet(ctx context.Context, c client.Client, namespace string) {
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(namespace)); err == nil {
			for i := range pods.Items {
				pod := &pods.Items[i]
				now := metav1.Now()
				switch pod.Status.Phase {
				case corev1.PodPending, "":
					pod.Status.Phase = corev1.PodRunning
					pod.Status.StartTime = &now
				case corev1.PodRunning:
					if pod.Status.StartTime == nil || now.Sub(pod.Status.StartTime.Time) < 300*time.Millisecond {
						continue
					}
					code := int32(0)
					pod.Status.Phase = corev1.PodSucceeded
					if failsNow(pod) {
						code, pod.Status.Phase = 1, corev1.PodFailed
					}
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "busybox:1.36", ImageID: "busybox",
						State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: *pod.Status.StartTime, FinishedAt: now}}}}
				default:
					continue
				}
				_ = c.Status().Update(ctx, pod)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}
