package reconciletest

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// An elastic group on the rig: a leader and three workers of two pods each,
// running, then the workers scaled to two children of three pods (the
// highest child deleted, the others resized in place and given a third pod
// by the Job controller), then back up to four children. The kubelet runs
// every pod, ready, and never finishes one.
func TestStoreElastic(t *testing.T) {
	c, s := NewStore(Options{Owner: groupKind, Seed: 11}, groupType)
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: groupKind, Clock: c.Clock()}, nil, nil)
	require.NoError(t, err)
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n), BackoffLimit: ptr.To[int32](0),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "x"}}}}}}
	}
	_, err = s.Create(&testGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"},
		Spec:      plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 3}}},
		Templates: []batchv1.JobTemplateSpec{tmpl(1), tmpl(2)}})
	require.NoError(t, err)
	c.Kubelet().SetScript(func(k *Kubelet, pod *corev1.Pod) error {
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending {
			if err := k.Run(pod.Namespace, pod.Name); err != nil {
				return err
			}
			return k.SetReady(pod.Namespace, pod.Name, true)
		}
		return nil
	})
	d := NewDriver(c, r)
	d.SyncFunc = s.SyncFunc(r)
	ctx := context.Background()
	// shape returns each child Job's name and parallelism, and the running
	// pods per child.
	shape := func() (map[string]int32, map[string]int) {
		jobs, pods := map[string]int32{}, map[string]int{}
		for _, j := range c.Jobs().List() {
			jobs[j.Name] = ptr.Deref(j.Spec.Parallelism, 1)
		}
		for _, p := range c.ListPods("ns") {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				pods[p.Labels[batchv1.JobNameLabel]]++
			}
		}
		return jobs, pods
	}
	runUntil := func(what string, wantJobs map[string]int32) {
		t.Helper()
		for range 60 {
			jobs, pods := shape()
			done := len(jobs) == len(wantJobs)
			for name, n := range wantJobs {
				done = done && jobs[name] == n && pods[name] == int(n)
			}
			if done {
				return
			}
			_, err := d.Step(ctx, "ns", "train")
			require.NoError(t, err)
		}
		jobs, pods := shape()
		t.Fatalf("not reached in 60 steps: %s; jobs %v, running pods %v", what, jobs, pods)
	}
	runUntil("the group runs", map[string]int32{"train-leader-0": 1, "train-workers-0": 2, "train-workers-1": 2, "train-workers-2": 2})
	uid := func(name string) string {
		j, err := c.Jobs().Get("ns", name)
		require.NoError(t, err)
		return string(j.UID)
	}
	kept := uid("train-workers-1")

	_, err = s.Update("ns", "train", func(g *testGroup) {
		g.Spec.Roles[1].Replicas = 2
		g.Templates[1].Spec.Parallelism, g.Templates[1].Spec.Completions = ptr.To[int32](3), ptr.To[int32](3)
	})
	require.NoError(t, err)
	runUntil("two workers of three pods", map[string]int32{"train-leader-0": 1, "train-workers-0": 3, "train-workers-1": 3})
	require.Equal(t, kept, uid("train-workers-1"), "resized in place, not replaced")
	workers := func() plaingroup.RoleStatus {
		g, err := s.Get("ns", "train")
		require.NoError(t, err)
		i := slices.IndexFunc(g.Status.ReplicatedJobs, func(r plaingroup.RoleStatus) bool { return r.Name == "workers" })
		require.GreaterOrEqual(t, i, 0)
		return g.Status.ReplicatedJobs[i]
	}
	// The Job controller counts the third pods ready, then the group does.
	for range 10 {
		if workers().Ready == 2 {
			break
		}
		_, err = d.Step(ctx, "ns", "train")
		require.NoError(t, err)
	}
	require.Equal(t, plaingroup.RoleStatus{Name: "workers", Ready: 2, Active: 2}, workers())
	g, err := s.Get("ns", "train")
	require.NoError(t, err)
	require.Empty(t, g.Status.TerminalState)
	require.Zero(t, g.Status.Restarts)

	_, err = s.Update("ns", "train", func(g *testGroup) { g.Spec.Roles[1].Replicas = 4 })
	require.NoError(t, err)
	runUntil("four workers of three pods", map[string]int32{"train-leader-0": 1, "train-workers-0": 3, "train-workers-1": 3, "train-workers-2": 3, "train-workers-3": 3})
}
