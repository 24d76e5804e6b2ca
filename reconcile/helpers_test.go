package reconcile_test

import (
	"context"

	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

const (
	testName = "jobkit.dev/test"
	ns       = "ns"
)

// env is a cluster, a reconciler and a driver wired together, with sequential API
// calls so that call logs are reproducible.
type env struct {
	c       *reconciletest.Cluster
	r       *reconcile.Reconciler
	cfg     reconcile.Config // r's, with the defaults filled in (its stores)
	d       *reconciletest.Driver
	events  *reconciletest.Recorder
	metrics *reconciletest.Recorder
}

func newEnv(t *testing.T, configure ...func(*reconcile.Config)) *env {
	t.Helper()
	c := reconciletest.NewCluster(reconciletest.Options{Seed: 7})
	e := &env{c: c, events: &reconciletest.Recorder{}, metrics: &reconciletest.Recorder{}}
	cfg := reconcile.Config{
		Name:                        testName,
		Clock:                       c.Clock(),
		Events:                      e.events,
		Metrics:                     e.metrics,
		FinalizerRemovalParallelism: 1,
		Backoff:                     plainbackoff.Policy{Base: time.Second, Max: 4 * time.Second},
	}
	for _, f := range configure {
		f(&cfg)
	}
	cfg, err := cfg.WithDefaults()
	require.NoError(t, err)
	r, err := reconcile.New(cfg, c, reconcile.JobStatusWriter(c))
	require.NoError(t, err)
	e.r, e.cfg = r, cfg
	e.d = reconciletest.NewDriver(c, r)
	return e
}

// job returns a Job managed by testName.
func job(name string, completions, parallelism int32) *batchv1.Job {
	j := reconciletest.NewJob(ns, name, completions, parallelism)
	j.Spec.ManagedBy = ptr.To(testName)
	return j
}

func indexedJob(name string, completions, parallelism int32) *batchv1.Job {
	j := job(name, completions, parallelism)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return j
}

func (e *env) create(t *testing.T, j *batchv1.Job) *batchv1.Job {
	t.Helper()
	out, err := e.c.Jobs().Create(j)
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	return out
}

// sync syncs the cached Job once.
func (e *env) sync(t *testing.T, name string) (reconcile.Result, error) {
	t.Helper()
	synced, res, err := e.d.Sync(t.Context(), ns, name)
	require.True(t, synced, "job %s not in the cache", name)
	return res, err
}

// ops returns the operations of the call log, in order.
func (e *env) ops() []reconciletest.Op {
	var out []reconciletest.Op
	for _, c := range e.c.Calls() {
		out = append(out, c.Op)
	}
	return out
}

func (e *env) count(op reconciletest.Op) int {
	n := 0
	for _, c := range e.c.Calls() {
		if c.Op == op {
			n++
		}
	}
	return n
}

// pods returns the stored pods of the namespace.
func (e *env) pods() []*corev1.Pod { return e.c.ListPods(ns) }

func (e *env) apiJob(t *testing.T, name string) *batchv1.Job {
	t.Helper()
	j, err := e.c.Jobs().Get(ns, name)
	require.NoError(t, err)
	return j
}

// runPods starts every Pending pod, ready.
func (e *env) runPods(t *testing.T) {
	t.Helper()
	for _, p := range e.pods() {
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			require.NoError(t, e.c.Kubelet().Run(ns, p.Name))
			require.NoError(t, e.c.Kubelet().SetReady(ns, p.Name, true))
		}
	}
}

func reconcileFault(o reconciletest.Op) reconciletest.Fault {
	return reconciletest.Fault{Op: o, Err: reconciletest.ServerError()}
}

// listOf is a PodLister that returns pods.
func listOf(pods []*corev1.Pod) reconcile.PodLister {
	return func(*plan.Workload) ([]*corev1.Pod, error) { return pods, nil }
}

// runOf is w as the test rig's Run (reconciletest.RunType): its identity in the
// metadata, the roles and rules in the spec.
func runOf(w *ownedpods.Workload) *reconciletest.Run {
	return &reconciletest.Run{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: *w, Status: w.Status}
}

// getJob is a live read of c's Jobs with the signature of a client's Get, for
// reconcile.ObjectOwnerReader.
func getJob(c *reconciletest.Cluster) func(context.Context, string, string) (*batchv1.Job, error) {
	return func(_ context.Context, namespace, name string) (*batchv1.Job, error) {
		return c.Jobs().Get(namespace, name)
	}
}
