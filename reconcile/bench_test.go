package reconcile_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// steadyJob builds a cluster with a Job of n running, ready pods whose status is up
// to date, so that a sync has nothing to write.
func steadyJob(b *testing.B, n int) (*reconciletest.Cluster, *reconcile.Reconciler, *batchv1.Job) {
	b.Helper()
	c := reconciletest.NewCluster(reconciletest.Options{})
	r, err := reconcile.New(reconcile.Config{Name: testName, Clock: c.Clock(), MaxCreatesPerSync: n}, c, reconcile.JobStatusWriter(c))
	require.NoError(b, err)
	j := job("big", int32(n), int32(n))
	created, err := c.Jobs().Create(j)
	require.NoError(b, err)
	ref := *metav1.NewControllerRef(created, batchv1.SchemeGroupVersion.WithKind("Job"))
	for i := range n {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("big-%06d", i), Labels: created.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{ref}, Finalizers: []string{finalizers.Name}},
			Spec: created.Spec.Template.Spec,
		}
		_, err := c.AddPod(p)
		require.NoError(b, err)
		require.NoError(b, c.Kubelet().Run(ns, p.Name))
		require.NoError(b, c.Kubelet().SetReady(ns, p.Name, true))
	}
	c.Cache().DeliverAll()
	// Two syncs: the first writes the status, the second confirms nothing is left.
	for range 2 {
		_, err = r.Sync(b.Context(), plan.JobWorkload(c.Jobs().Cached(ns, "big")), c.Cache().OwnerPods)
		require.NoError(b, err)
		c.Cache().DeliverAll()
	}
	c.ResetCalls()
	return c, r, c.Jobs().Cached(ns, "big")
}

// BenchmarkSyncSteady: one sync of a Job whose n pods all run, through the cache
// lister (which sorts the pods), with nothing to write.
func BenchmarkSyncSteady(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n > 1000 && testing.Short() {
				b.Skip("large setup")
			}
			c, r, j := steadyJob(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Sync(b.Context(), plan.JobWorkload(j), c.Cache().OwnerPods); err != nil {
					b.Fatal(err)
				}
			}
			if calls := c.Calls(); len(calls) != 0 {
				b.Fatalf("steady sync made calls: %v", calls[0])
			}
		})
	}
}

// BenchmarkSyncSteadyListed is BenchmarkSyncSteady with the pods listed once before
// the loop: the cost of the Reconciler and the plan alone.
func BenchmarkSyncSteadyListed(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			if n > 1000 && testing.Short() {
				b.Skip("large setup")
			}
			c, r, j := steadyJob(b, n)
			pods, err := c.Cache().OwnerPods(plan.JobWorkload(j))
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Sync(b.Context(), plan.JobWorkload(j), listOf(pods)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSyncFinish: one sync of a Job whose n pods have all succeeded: it records
// up to 500 of them, removes their finalizers and counts them (two status writes and
// min(n,500) patches against the in-memory cluster). The setup runs outside the timer.
func BenchmarkSyncFinish(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c, r, _ := steadyJob(b, n)
				for _, p := range c.ListPods(ns) {
					require.NoError(b, c.Kubelet().Succeed(ns, p.Name))
				}
				c.Cache().DeliverAll()
				j := c.Jobs().Cached(ns, "big")
				b.StartTimer()
				if _, err := r.Sync(b.Context(), plan.JobWorkload(j), c.Cache().OwnerPods); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMapPodEvent(b *testing.B) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", UID: "job-a"}}
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", UID: "pod", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		Finalizers:      []string{finalizers.Name}}}
	cur := old.DeepCopy()
	cur.ResourceVersion = "2"
	cur.Status.Phase = corev1.PodSucceeded
	events := map[string]reconcile.PodEvent{
		"add":    {Type: reconcile.PodAdded, New: old},
		"update": {Type: reconcile.PodUpdated, Old: old, New: cur},
		"delete": {Type: reconcile.PodDeleted, Old: cur},
		"resync": {Type: reconcile.PodUpdated, Old: old, New: old},
	}
	for _, name := range []string{"add", "update", "delete", "resync"} {
		ev := events[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				reconcile.MapPodEvent(owner.BatchJob, ev, time.Second)
			}
		})
	}
	b.Run("ObservePodEvent", func(b *testing.B) {
		c := reconciletest.NewCluster(reconciletest.Options{})
		r, err := reconcile.New(reconcile.Config{Name: testName}, c, c)
		require.NoError(b, err)
		own := finalizers.JobOwner(job)
		lookup := func(string, string) *finalizers.OrphanOwner { return own }
		ev := events["update"]
		b.ReportAllocs()
		for b.Loop() {
			r.ObservePodEvent(ev, lookup)
		}
	})
}

func TestMapPodEventAllocs(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a", UID: "job-a"}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}}}
	ev := reconcile.PodEvent{Type: reconcile.PodUpdated, Old: p, New: p}
	if n := testing.AllocsPerRun(100, func() { reconcile.MapPodEvent(owner.BatchJob, ev, time.Second) }); n != 0 {
		t.Errorf("MapPodEvent(resync) allocates %v times, want 0", n)
	}
	ev = reconcile.PodEvent{Type: reconcile.PodAdded, New: p}
	if n := testing.AllocsPerRun(100, func() { reconcile.MapPodEvent(owner.BatchJob, ev, time.Second) }); n > 2 {
		t.Errorf("MapPodEvent(add) allocates %v times, want at most 2 (the key and the slice)", n)
	}
	_ = ptr.To[int]
}

// BenchmarkSyncChildJobsSteady is one sync of a settled group of 10, 100 and
// 1,000 children: the plan, no call.
func BenchmarkSyncChildJobsSteady(b *testing.B) {
	for _, n := range []int32{10, 100, 1000} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			api := newGroupAPIOf(n)
			r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName}, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			for range 3 {
				if _, err := r.SyncChildJobs(b.Context(), api.cache(), api, api); err != nil {
					b.Fatal(err)
				}
			}
			api.takeCalls()
			in := api.cache()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.SyncChildJobs(b.Context(), in, api, api); err != nil {
					b.Fatal(err)
				}
			}
			if calls := api.takeCalls(); calls != "" {
				b.Fatalf("calls %q in a steady sync", calls)
			}
		})
	}
}
