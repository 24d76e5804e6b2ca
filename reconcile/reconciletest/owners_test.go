package reconciletest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// batchRunKind is the kind of this test's own owner type.
var batchRunKind = owner.Kind{Group: "runs.example.com", Version: "v1", Kind: "BatchRun", Finalizer: "runs.example.com/worker-tracking"}

// batchRun is an owner type of the test's own, neither a Job nor a Task: its spec
// has its own field names and its status its own shape (a phase and worker counts),
// converted onto a Workload and back as an operator's controller would.
type batchRun struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Workers, Target int32
	Phase           string
	Succeeded       int32
	Failed          int32
	// job keeps the fields of the Job status jobkit needs back exactly (the
	// ledger, the conditions, the times).
	job batchv1.JobStatus
}

func (r *batchRun) DeepCopyObject() runtime.Object {
	out := *r
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	r.job.DeepCopyInto(&out.job)
	return &out
}

// batchRunType is the controller's conversion of a BatchRun onto a Workload and
// of a Job status back into a BatchRun's own shape, as an operator's would be.
var batchRunType = reconcile.Type[*batchRun]{
	New: func() *batchRun { return &batchRun{} },
	Workload: func(r *batchRun) (*plan.Workload, error) {
		tmpl := reconciletest.NewJob(r.Namespace, r.Name, 1, 1).Spec.Template
		return &plan.Workload{
			Namespace: r.Namespace, Name: r.Name, UID: r.UID,
			Spec: plan.Spec{
				Parallelism: ptr.To(r.Workers), Completions: ptr.To(r.Target),
				BackoffLimit: ptr.To[int32](4), Template: &tmpl,
			},
			Status:          *r.job.DeepCopy(),
			ResourceVersion: r.ResourceVersion,
			Object:          r,
		}, nil
	},
	SetStatus: func(r *batchRun, st batchv1.JobStatus) {
		r.job = *st.DeepCopy()
		r.Succeeded, r.Failed = st.Succeeded, st.Failed
		switch {
		case jobstatus.IsConditionTrue(st.Conditions, batchv1.JobComplete):
			r.Phase = "Succeeded"
		case jobstatus.IsConditionTrue(st.Conditions, batchv1.JobFailed):
			r.Phase = "Failed"
		case st.Active > 0:
			r.Phase = "Running"
		}
	},
}

// newBatchRun returns a BatchRun of workers pods at a time until target succeed.
func newBatchRun(namespace, name string, workers, target int32) *batchRun {
	return &batchRun{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Workers: workers, Target: target, Phase: "Pending"}
}

func newRunCluster() (*reconciletest.Cluster, *reconciletest.Store[*batchRun]) {
	return reconciletest.NewStore(reconciletest.Options{Owner: batchRunKind, Seed: 3}, batchRunType)
}

func newRunReconciler(t *testing.T, c *reconciletest.Cluster, store *reconciletest.Store[*batchRun]) *reconcile.Reconciler {
	t.Helper()
	r, err := reconcile.New(reconcile.Config{Name: managedBy, Owner: batchRunKind, Clock: c.Clock(), FinalizerRemovalParallelism: 1}, c, store)
	require.NoError(t, err)
	return r
}

func mustGet[T any](t *testing.T, get func(string, string) (T, error), namespace, name string) T {
	t.Helper()
	o, err := get(namespace, name)
	require.NoError(t, err)
	return o
}

// TestDriverOwnStoreThroughFaults runs an owner of the test's own type to
// completion through pod call faults, status conflicts, failing pods and a
// controller restart, with the Driver feeding the pod events and reading the
// test's store; the orphan cleanup and the garbage collector then leave the live
// BatchRun's pods alone and clean up after a deleted one.
func TestDriverOwnStoreThroughFaults(t *testing.T) {
	ctx := context.Background()
	c, store := newRunCluster()
	// Two status writes racing another writer.
	c.InjectFault(reconciletest.Fault{Op: reconciletest.OpUpdateStatus, Times: 2,
		Err: apierrors.NewConflict(schema.GroupResource{Group: batchRunKind.Group, Resource: "batchruns"}, "run", errors.New("stale"))})
	c.FailNth(reconciletest.OpCreatePod, 2, reconciletest.ServerError())
	c.InjectFault(reconciletest.Fault{Op: reconciletest.OpPatchPod, After: 1, Err: reconciletest.TimeoutError(), AfterWrite: true})
	c.Kubelet().SetScript(reconciletest.FailFirst(2, 1))
	c.SetEventLatency(2 * time.Second)
	_, err := store.Create(newBatchRun(ns, "run", 2, 4))
	require.NoError(t, err)

	d := reconciletest.NewDriver(c, newRunReconciler(t, c, store))
	_, err = d.Run(ctx, ns, "run", 6)
	require.ErrorIs(t, err, reconciletest.ErrStepLimit, "six steps do not finish the run")
	d.Restart(newRunReconciler(t, c, store))
	rr, err := d.Run(ctx, ns, "run", 200)
	require.NoError(t, err)
	require.NotNil(t, rr.Workload)

	run := mustGet(t, store.Get, ns, "run")
	assert.Equal(t, "Succeeded", run.Phase)
	assert.Equal(t, int32(4), run.Succeeded)
	assert.Equal(t, int32(2), run.Failed, "the two pods the Kubelet failed")
	assert.Positive(t, rr.SyncErrors, "the faults reached the syncs")
	pods := c.ListPods(ns)
	assert.Len(t, pods, 6, "four successes and two failures, no pod twice")
	for _, p := range pods {
		assert.False(t, batchRunKind.HasFinalizer(p), "pod %s keeps its tracking finalizer", p.Name)
		assert.True(t, batchRunKind.IsControlledBy(p, string(run.UID)), "pod %s", p.Name)
	}

	// A live BatchRun keeps its pods; once it is gone, they go.
	assert.Zero(t, c.CollectGarbage(), "CollectGarbage deleted pods of a live BatchRun")
	assert.Len(t, c.ListPods(ns), 6)
	require.NoError(t, store.Delete(ns, "run"))
	assert.Equal(t, 6, c.CollectGarbage())
	assert.Empty(t, c.ListPods(ns))
}

// TestDriverOwnStoreOrphans deletes a BatchRun of the test's store while its pods
// run: CleanOrphans strips their finalizers (the owner's facts come from the
// store), and none of a live BatchRun's.
func TestDriverOwnStoreOrphans(t *testing.T) {
	ctx := context.Background()
	c, store := newRunCluster()
	c.Kubelet().SetScript(nil)
	for _, name := range []string{"gone", "live"} {
		_, err := store.Create(newBatchRun(ns, name, 2, 2))
		require.NoError(t, err)
	}
	c.Cache().DeliverAll()
	d := reconciletest.NewDriver(c, newRunReconciler(t, c, store))
	for range 3 {
		for _, name := range []string{"gone", "live"} {
			_, _, err := d.Sync(ctx, ns, name)
			require.NoError(t, err)
		}
		c.Cache().DeliverAll()
	}
	require.Len(t, c.ListPods(ns), 4)
	gone := mustGet(t, store.Get, ns, "gone")
	require.NoError(t, store.Delete(ns, "gone"))
	c.Cache().DeliverAll()

	n, err := d.CleanOrphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the deleted BatchRun's two pods")
	for _, p := range c.ListPods(ns) {
		orphan := batchRunKind.IsControlledBy(p, string(gone.UID))
		assert.Equal(t, !orphan, batchRunKind.HasFinalizer(p), "pod %s: finalizer kept only on the live BatchRun's pods", p.Name)
	}
}

// TestCollectGarbageKeepsLiveOwners checks that CollectGarbage deletes only pods
// whose every owner is gone, for owners of every kind a cluster may know: Jobs,
// Tasks, owners of a test's store, and kinds it does not know at all.
func TestCollectGarbageKeepsLiveOwners(t *testing.T) {
	other := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)}
	ref := func(k owner.Kind, name string, uid types.UID) metav1.OwnerReference {
		gvk := k.GroupVersionKind()
		return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, UID: uid, Controller: ptr.To(true)}
	}
	tests := []struct {
		name string
		// cluster returns the cluster and the Store of its Options.Owner (any
		// when it has none).
		cluster func() (*reconciletest.Cluster, any)
		// live and gone are references to an owner that exists and to one that
		// does not (deleted, or replaced under its name).
		live, gone func(*testing.T, *reconciletest.Cluster, any) metav1.OwnerReference
	}{{
		name:    "Jobs",
		cluster: func() (*reconciletest.Cluster, any) { return reconciletest.NewCluster(reconciletest.Options{}), nil },
		live: func(t *testing.T, c *reconciletest.Cluster, _ any) metav1.OwnerReference {
			j, err := c.Jobs().Create(reconciletest.NewJob(ns, "live", 1, 1))
			require.NoError(t, err)
			return ref(owner.BatchJob, j.Name, j.UID)
		},
		gone: func(t *testing.T, c *reconciletest.Cluster, _ any) metav1.OwnerReference {
			j, err := c.Jobs().Create(reconciletest.NewJob(ns, "gone", 1, 1))
			require.NoError(t, err)
			require.NoError(t, c.Jobs().Delete(ns, j.Name))
			return ref(owner.BatchJob, j.Name, j.UID)
		},
	}, {
		name: "Tasks",
		cluster: func() (*reconciletest.Cluster, any) {
			return reconciletest.NewStore(reconciletest.Options{Owner: taskKind}, reconciletest.TaskType)
		},
		live: func(t *testing.T, _ *reconciletest.Cluster, s any) metav1.OwnerReference {
			tk, err := s.(*reconciletest.Store[*reconciletest.Task]).Create(newTask(ns, "live", 1, 1))
			require.NoError(t, err)
			return ref(taskKind, tk.Name, tk.UID)
		},
		gone: func(t *testing.T, _ *reconciletest.Cluster, s any) metav1.OwnerReference {
			tasks := s.(*reconciletest.Store[*reconciletest.Task])
			tk, err := tasks.Create(newTask(ns, "gone", 1, 1))
			require.NoError(t, err)
			require.NoError(t, tasks.Delete(ns, tk.Name))
			return ref(taskKind, tk.Name, tk.UID)
		},
	}, {
		name: "test's own type",
		cluster: func() (*reconciletest.Cluster, any) {
			return reconciletest.NewStore(reconciletest.Options{Owner: batchRunKind}, batchRunType)
		},
		live: func(t *testing.T, _ *reconciletest.Cluster, s any) metav1.OwnerReference {
			r, err := s.(*reconciletest.Store[*batchRun]).Create(newBatchRun(ns, "live", 1, 1))
			require.NoError(t, err)
			return ref(batchRunKind, "live", r.UID)
		},
		gone: func(t *testing.T, _ *reconciletest.Cluster, s any) metav1.OwnerReference {
			runs := s.(*reconciletest.Store[*batchRun])
			old, err := runs.Create(newBatchRun(ns, "gone", 1, 1))
			require.NoError(t, err)
			require.NoError(t, runs.Delete(ns, "gone"))
			_, err = runs.Create(newBatchRun(ns, "gone", 1, 1)) // the name lives on, with another UID
			require.NoError(t, err)
			return ref(batchRunKind, "gone", old.UID)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, store := tt.cluster()
			live, gone := tt.live(t, c, store), tt.gone(t, c, store)
			// A reference of the cluster's own kind to a name it never held.
			never := ref(c.Owner(), "never", "never-uid")
			pods := []struct {
				name     string
				refs     []metav1.OwnerReference
				wantGone bool
			}{
				{"live-owner", []metav1.OwnerReference{live}, false},
				{"gone-owner", []metav1.OwnerReference{gone}, true},
				{"never-owner", []metav1.OwnerReference{never}, true},
				{"unknown-kind", []metav1.OwnerReference{other}, false},
				{"custom-kind-elsewhere", []metav1.OwnerReference{ref(otherKind, "tj", "tj-uid")}, false},
				{"gone-and-live", []metav1.OwnerReference{gone, live}, false},
				{"gone-and-unknown", []metav1.OwnerReference{gone, other}, false},
				{"no-owner", nil, false},
			}
			want := 0
			for _, p := range pods {
				_, err := c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name, OwnerReferences: p.refs}})
				require.NoError(t, err)
				if p.wantGone {
					want++
				}
			}
			assert.Equal(t, want, c.CollectGarbage())
			for _, p := range pods {
				_, err := c.GetPod(context.Background(), ns, p.name)
				assert.Equal(t, p.wantGone, apierrors.IsNotFound(err), "pod %s: %v", p.name, err)
			}
		})
	}
}
