package controllerruntime

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	name = "example.com/jobs"
)

// recQueue records what the handlers queue.
type recQueue struct {
	queue // nil: only Add and AddAfter are called
	added map[string]time.Duration
}

func (q *recQueue) Add(r crreconcile.Request) { q.AddAfter(r, 0) }

func (q *recQueue) AddAfter(r crreconcile.Request, d time.Duration) {
	if q.added == nil {
		q.added = map[string]time.Duration{}
	}
	q.added[r.String()] = d
}

func testJob(uid types.UID) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: uid, Generation: 1},
		Spec:       batchv1.JobSpec{ManagedBy: ptr.To(name)},
	}
}

func testPod(podName string, job *batchv1.Job, fins ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: podName, UID: types.UID(podName + "-uid"), Finalizers: fins,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}}
}

// newOwner returns the owner part of a controller of batch/v1 Jobs over a fake
// client holding objs.
func newOwner(t testing.TB, read reconcile.OwnerReader, objs ...client.Object) (*ownerOf[*batchv1.Job], client.Client) {
	t.Helper()
	cl := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, OwnerUIDIndex, OwnerUID).WithStatusSubresource(&batchv1.Job{}).Build()
	o := &ownerOf[*batchv1.Job]{
		cache:   cl,
		scheme:  scheme.Scheme,
		typ:     reconcile.JobType,
		invalid: "InvalidJob",
		orphans: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()),
		log:     logr.Discard(),
	}
	useConfig(t, o, cl, reconcile.Config{Name: name, ReadOwner: read})
	return o, cl
}

// useConfig gives o a Reconciler over cl configured by cfg.
func useConfig(t testing.TB, o *ownerOf[*batchv1.Job], cl client.Client, cfg reconcile.Config) {
	t.Helper()
	cfg, err := cfg.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reconcile.New(cfg, newAPIClient(cl, cl), statusWriter[*batchv1.Job]{c: cl, typ: reconcile.JobType})
	if err != nil {
		t.Fatal(err)
	}
	o.rec, o.cfg = rec, cfg
}

func TestOwnerEvents(t *testing.T) {
	old := testJob("u1")
	statusOnly := old.DeepCopy()
	statusOnly.Status.Active = 1
	specChange := old.DeepCopy()
	specChange.Generation = 2
	tracked, untracked := testPod("tracked", old, finalizers.Name), testPod("untracked", old)
	tests := []struct {
		name        string
		update      *batchv1.Job // nil: old is deleted
		wantQueued  map[string]time.Duration
		wantOrphans int
	}{
		{name: "status-only update: after the batch period", update: statusOnly, wantQueued: map[string]time.Duration{"ns/j": time.Second}},
		{name: "spec change: at once", update: specChange, wantQueued: map[string]time.Duration{"ns/j": 0}},
		{name: "deletion: no sync, the tracked pod to the orphan worker", wantOrphans: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _ := newOwner(t, nil, tracked.DeepCopy(), untracked.DeepCopy())
			h, q := o.ownerEvents(), &recQueue{}
			if tt.update != nil {
				h.Update(t.Context(), event.TypedUpdateEvent[client.Object]{ObjectOld: old, ObjectNew: tt.update}, q)
			} else {
				h.Delete(t.Context(), event.TypedDeleteEvent[client.Object]{Object: old}, q)
			}
			if len(q.added) != len(tt.wantQueued) {
				t.Errorf("queued %v, want %v", q.added, tt.wantQueued)
			}
			for k, d := range tt.wantQueued {
				if got, ok := q.added[k]; !ok || got != d {
					t.Errorf("queued %v, want %s after %v", q.added, k, d)
				}
			}
			if got := o.orphans.Len(); got != tt.wantOrphans {
				t.Errorf("orphan queue length = %d, want %d", got, tt.wantOrphans)
			}
		})
	}
}

// CleanOrphan gives the Reconciler what the cache shows; the Reconciler confirms a
// missing owner through its ReadOwner.
func TestCleanOrphan(t *testing.T) {
	job := testJob("u1")
	live := func(context.Context, string, string) (*plan.Workload, error) { return plan.JobWorkload(job), nil }
	gone := func(context.Context, string, string) (*plan.Workload, error) { return nil, nil }
	tests := []struct {
		name       string
		read       reconcile.OwnerReader
		cached     bool
		wantRemove bool
	}{
		{name: "owner in the cache, unfinished: kept", read: gone, cached: true},
		{name: "owner missing from the cache but live: kept", read: live},
		{name: "owner gone: finalizer removed", read: gone, wantRemove: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{testPod("p", job, finalizers.Name)}
			if tt.cached {
				objs = append(objs, job.DeepCopy())
			}
			o, cl := newOwner(t, tt.read, objs...)
			if err := o.cleanOrphan(t.Context(), types.NamespacedName{Namespace: "ns", Name: "p"}); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{}
			if err := cl.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "p"}, pod); err != nil {
				t.Fatal(err)
			}
			if removed := !owner.BatchJob.HasFinalizer(pod); removed != tt.wantRemove {
				t.Errorf("finalizer removed = %v, want %v", removed, tt.wantRemove)
			}
		})
	}
	o, _ := newOwner(t, gone)
	if err := o.cleanOrphan(t.Context(), types.NamespacedName{Namespace: "ns", Name: "missing"}); err != nil {
		t.Errorf("CleanOrphan(pod gone from the cache) = %v, want nil", err)
	}
}

// Reconcile syncs a managed owner and forgets one missing from the cache.
func TestReconcile(t *testing.T) {
	job := testJob("u1")
	job.Spec.Template = corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	o, cl := newOwner(t, nil, job)
	var synced int
	o.onSync = func(_ *batchv1.Job, res reconcile.Result, err error) {
		synced++
		if err != nil {
			t.Errorf("sync error = %v", err)
		}
	}
	req := crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}}
	if _, err := o.reconcileKey(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	var pods corev1.PodList
	if err := cl.List(t.Context(), &pods); err != nil {
		t.Fatal(err)
	}
	if synced != 1 || len(pods.Items) != 1 {
		t.Errorf("after Reconcile: %d syncs, %d pods, want 1 and 1", synced, len(pods.Items))
	}
	if !o.cfg.Expectations.Get("ns/j").Exists {
		t.Fatal("no expectations after the sync that created a pod")
	}
	if err := cl.Delete(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if _, err := o.reconcileKey(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if o.cfg.Expectations.Get("ns/j").Exists || synced != 1 {
		t.Errorf("a Job missing from the cache: expectations kept or synced (%d syncs)", synced)
	}
}

// BenchmarkHandlePod measures the pod event handler (observe, map to the owner,
// queue) for an update of a pod of a Job with 10, 1,000 and 100,000 pods in the
// cache: the cost does not grow with the pods (one cached owner read).
func BenchmarkHandlePod(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			job := testJob("u1")
			objs := []client.Object{job}
			for i := range n {
				objs = append(objs, testPod("p"+strconv.Itoa(i), job, finalizers.Name))
			}
			o, _ := newOwner(b, nil, objs...)
			old := testPod("p0", job, finalizers.Name)
			cur := old.DeepCopy()
			cur.Status.Phase = corev1.PodRunning
			ev := reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: cur}
			q := &recQueue{}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				o.handlePod(ctx, ev, q)
			}
		})
	}
}
