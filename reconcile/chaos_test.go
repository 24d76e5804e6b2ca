package reconcile_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/sim"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// TestChaos runs small Jobs through API faults, delayed, reordered and lost watch
// events and controller restarts, and checks that every pod is counted exactly once,
// against a model built from the cluster's writes: a pod is counted when the
// controller removes its tracking finalizer, as succeeded if it had succeeded, as
// failed if it had failed or was being deleted unfinished, and not at all if it was
// still running (scale-down). It is a small preview of the fault simulator of issue 5
// (internal/sim) on the same rig: the Driver and Cluster of reconciletest, with the
// faults as outcomes of the Cluster's one interceptor.
func TestChaos(t *testing.T) {
	seeds := chaosSeeds
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runChaos(t, uint64(seed)) })
	}
}

func runChaos(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xc4a05))
	c := reconciletest.NewCluster(reconciletest.Options{Seed: seed})
	newReconciler := func() *reconcile.Reconciler {
		r, err := reconcile.New(reconcile.Config{
			Name: testName, Clock: c.Clock(), FinalizerRemovalParallelism: 1,
			Backoff:           plainbackoff.Policy{Base: time.Second, Max: 4 * time.Second},
			ExpectationsTTL:   30 * time.Second,
			MaxUncounted:      1 + rng.IntN(4),
			MaxCreatesPerSync: 1 + rng.IntN(6),
		}, c, reconcile.JobStatusWriter(c))
		require.NoError(t, err)
		return r
	}
	d := reconciletest.NewDriver(c, newReconciler())

	completions, parallelism := int32(1+rng.IntN(10)), int32(1+rng.IntN(5))
	j := job("chaos", completions, parallelism)
	indexed := rng.IntN(2) == 0
	if indexed {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	j.Spec.BackoffLimit = ptr.To[int32](10000)
	_, err := c.Jobs().Create(j)
	require.NoError(t, err)

	m := watchModel(c, completions)

	// Faults: 10% of the calls, drawn from the simulator's fault kinds (their
	// outcomes are written once, in sim.FaultKind.Outcome).
	callFaults := []sim.FaultKind{sim.FaultServerError, sim.FaultConflict, sim.FaultTooManyRequests, sim.FaultTimeout}
	c.SetInterceptor(func(call reconciletest.Call) reconciletest.Outcome {
		if rng.IntN(10) != 0 {
			return reconciletest.Outcome{}
		}
		return callFaults[rng.IntN(len(callFaults))].Outcome()
	})
	c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
		if p.DeletionTimestamp != nil {
			return nil
		}
		switch p.Status.Phase {
		case corev1.PodPending:
			if rng.IntN(3) != 0 {
				return k.Run(p.Namespace, p.Name)
			}
		case corev1.PodRunning:
			switch n := rng.IntN(20); {
			case n < 5:
				return k.Succeed(p.Namespace, p.Name)
			case n < 7:
				return k.Fail(p.Namespace, p.Name, 1)
			case n < 8:
				return k.Evict(p.Namespace, p.Name)
			case n < 9:
				return k.SetReady(p.Namespace, p.Name, true)
			}
		}
		return nil
	})

	cache := c.Cache()
	for step := 0; ; step++ {
		if step == 3000 {
			t.Fatalf("seed %d: not finished after %d steps: %+v", seed, step, c.Jobs().List()[0].Status)
		}
		switch n := rng.IntN(100); {
		case n < 2:
			d.Restart(newReconciler())
		case n < 5:
			_, err := c.Jobs().Update(ns, "chaos", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(int32(rng.IntN(6))) })
			require.NoError(t, err)
		case n < 60:
			cache.DeliverDue()
		case n < 64:
			if p := cache.Pending(); len(p) > 0 {
				require.NoError(t, cache.DropAt(rng.IntN(len(p)))) // a lost event
			}
		default:
			for range rng.IntN(4) {
				if p := cache.Pending(); len(p) > 0 {
					require.NoError(t, cache.DeliverAt(rng.IntN(len(p)))) // reordered
				}
			}
		}
		_, _, _ = d.Sync(t.Context(), ns, "chaos")
		require.NoError(t, c.Kubelet().Step())
		c.Clock().Step(time.Second)
		if d.Done(ns, "chaos") {
			break
		}
	}
	for _, call := range c.Calls() {
		if apierrors.IsInvalid(call.Err) {
			t.Errorf("seed %d: the API server refused a write: %v", seed, call)
		}
	}
	st := c.Jobs().List()[0].Status
	require.Truef(t, hasTrue(st.Conditions, batchv1.JobComplete), "seed %d: conditions %+v", seed, st.Conditions)
	m.check(t, st, indexed, fmt.Sprintf("seed %d", seed))
	require.GreaterOrEqual(t, st.Succeeded, completions, "seed %d", seed)
}

// model counts pods from the cluster's writes: a pod is counted when the controller
// removes its tracking finalizer, as succeeded if it had succeeded, as failed if it
// had failed or was being deleted unfinished, and not at all if it was still active.
type model struct {
	last              map[types.UID]*corev1.Pod
	succeededIx       sets.Set[int]
	succeeded, failed int32
}

func watchModel(c *reconciletest.Cluster, completions int32) *model {
	m := &model{last: map[types.UID]*corev1.Pod{}, succeededIx: sets.New[int]()}
	c.OnWrite(func(ev reconciletest.WatchEvent) {
		p := ev.Pod
		if p == nil {
			return
		}
		if old := m.last[p.UID]; old != nil && owner.BatchJob.HasFinalizer(old) && !owner.BatchJob.HasFinalizer(p) {
			switch {
			case old.Status.Phase == corev1.PodSucceeded:
				m.succeeded++
				if ix, err := indexes.PodIndex(owner.BatchJob, old); err == nil && ix < int(completions) {
					m.succeededIx.Insert(ix)
				}
			case old.Status.Phase == corev1.PodFailed || old.DeletionTimestamp != nil:
				m.failed++
			}
		}
		m.last[p.UID] = p
	})
	return m
}

func (m *model) check(t *testing.T, st batchv1.JobStatus, indexed bool, what string) {
	t.Helper()
	if indexed {
		require.Equal(t, int32(m.succeededIx.Len()), st.Succeeded, "%s: succeeded indexes", what)
	} else {
		require.Equal(t, m.succeeded, st.Succeeded, "%s: succeeded", what)
	}
	require.Equal(t, m.failed, st.Failed, "%s: failed", what)
}

// chaosSeeds is the number of seeds TestChaos runs (10 with -short).
var chaosSeeds = 60

func hasTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestCrashAtEveryCall crashes the controller at each API call of a run in turn
// (every call from that one to the end of the sync fails, then the controller
// restarts with empty state and a new cache) and checks that the Job still finishes
// with exact counts.
func TestCrashAtEveryCall(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		for crashAt := 1; crashAt <= 40; crashAt++ {
			t.Run(fmt.Sprintf("indexed=%v/call=%d", indexed, crashAt), func(t *testing.T) {
				c := reconciletest.NewCluster(reconciletest.Options{Seed: 3})
				newReconciler := func() *reconcile.Reconciler {
					r, err := reconcile.New(reconcile.Config{Name: testName, Clock: c.Clock(), FinalizerRemovalParallelism: 1,
						Backoff: plainbackoff.Policy{Base: time.Second, Max: 2 * time.Second}}, c, reconcile.JobStatusWriter(c))
					require.NoError(t, err)
					return r
				}
				d := reconciletest.NewDriver(c, newReconciler())
				j := job("crash", 5, 3)
				if indexed {
					j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
				}
				_, err := c.Jobs().Create(j)
				require.NoError(t, err)
				m := watchModel(c, 5)
				c.Kubelet().SetScript(reconciletest.FailFirst(2, 1))
				calls, crashed := 0, false
				c.SetInterceptor(func(reconciletest.Call) reconciletest.Outcome {
					calls++
					if calls >= crashAt && !crashed {
						return reconciletest.Outcome{Err: reconciletest.ServerError()}
					}
					return reconciletest.Outcome{}
				})
				for step := 0; ; step++ {
					require.Less(t, step, 200, "not finished")
					sr, err := d.Step(t.Context(), ns, "crash")
					require.NoError(t, err)
					if calls >= crashAt && !crashed {
						crashed = true
						d.Restart(newReconciler())
					}
					if d.Done(ns, "crash") {
						jb := sr.Workload.Object.(*batchv1.Job)
						m.check(t, jb.Status, indexed, "after the crash")
						require.GreaterOrEqual(t, jb.Status.Succeeded, int32(5))
						return
					}
				}
			})
		}
	}
}
