package controllerruntime_test

import (
	"context"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/controllerruntime"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// kubelet runs the pods of namespace through the API until ctx ends: each Pending
// pod is bound and Running, then Succeeded (or Failed with exit code 1 for the first
// fail pods).
func kubelet(ctx context.Context, t *testing.T, c client.Client, namespace string, fail int) {
	t.Helper()
	go func() {
		failed := 0
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			for i := range pods.Items {
				pod := &pods.Items[i]
				now := metav1.Now()
				switch pod.Status.Phase {
				case corev1.PodPending, "":
					pod.Status.Phase = corev1.PodRunning
					pod.Status.StartTime = &now
				case corev1.PodRunning:
					code := int32(0)
					pod.Status.Phase = corev1.PodSucceeded
					if failed < fail {
						code = 1
						pod.Status.Phase = corev1.PodFailed
					}
					pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
						Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: now, FinishedAt: now}}}}
					if err := c.Status().Update(ctx, pod); err == nil && code != 0 {
						failed++
					}
					continue
				default:
					continue
				}
				_ = c.Status().Update(ctx, pod)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestControllerRunsJobAndCleansOrphans(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := directClient(t)
	ns := namespace(t, c, "cr-controller")
	const name = "test.jobkit.dev/cr-controller"
	run, err := controllerruntime.Start(ctx, restConfig, controllerruntime.ManagerOptions{SkipNameValidation: true},
		reconcile.Config{Name: name, PodEventBatchPeriod: 20 * time.Millisecond},
		controllerruntime.Options{SkipNameValidation: true, ControllerName: "cr-controller-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Stop() }()
	kubelet(ctx, t, c, ns, 1)

	job := reconciletest.NewJob(ns, "work", 3, 2)
	job.Spec.ManagedBy = ptr.To(name)
	job.Spec.BackoffLimit = ptr.To[int32](3)
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	other := reconciletest.NewJob(ns, "not-mine", 1, 1)
	other.Spec.ManagedBy = ptr.To("example.com/someone-else")
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	key := types.NamespacedName{Namespace: ns, Name: "work"}
	waitFor(t, "the Job to complete", 30*time.Second, func() bool {
		got := &batchv1.Job{}
		return c.Get(ctx, key, got) == nil && slices.ContainsFunc(got.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		})
	})
	got := &batchv1.Job{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Succeeded != 3 || got.Status.Failed != 1 {
		t.Errorf("status succeeded=%d failed=%d, want 3 and 1", got.Status.Succeeded, got.Status.Failed)
	}

	// An orphan: a pod whose controller is a Job that is deleted.
	doomed := reconciletest.NewJob(ns, "doomed", 1, 1)
	doomed.Spec.ManagedBy = ptr.To(name)
	doomed.Spec.Suspend = ptr.To(true)
	if err := c.Create(ctx, doomed); err != nil {
		t.Fatal(err)
	}
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan", Finalizers: []string{finalizers.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(doomed, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: job.Spec.Template.Spec}
	if err := c.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := c.Delete(ctx, doomed, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the orphan's finalizer to go", 30*time.Second, func() bool {
		p := &corev1.Pod{}
		err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "orphan"}, p)
		return err == nil && !owner.BatchJob.HasFinalizer(p) || err != nil
	})

	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "not-mine"}, other); err != nil {
		t.Fatal(err)
	}
	if other.Status.Active != 0 || len(other.Status.Conditions) != 0 {
		t.Errorf("a Job managed by another controller was touched: status %+v", other.Status)
	}
}
