package reconcile_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// restartRun is the group restart of TestSyncRolesE2EGroupRestart: worker 1 of
// attempt 0 fails twice, the launcher of attempt 1 succeeds.
func restartRun(t *testing.T, seed uint64) *trainRun {
	return restartRunWith(t, seed, plaingroup.Recreate)
}

func restartRunWith(t *testing.T, seed uint64, strategy plaingroup.RestartStrategy) *trainRun {
	w := trainingJob(3, 2)
	w.FailurePolicy.RestartStrategy = strategy
	tr := newTrainRun(t, w, reconciletest.Options{Seed: seed})
	tr.failures[podSlot{"worker", 0, "1"}] = []int32{1, 1}
	tr.launcherFrom = 1
	return tr
}

// scenarios are the runs the crash and fault tests repeat: each ends the same
// with or without faults.
// exact says that the totals do not depend on the faults: no role fails while
// others of its pods run.
var scenarios = []struct {
	name  string
	exact bool
	// state and restarts are how the run ends.
	state    string
	restarts int32
	run      func(t *testing.T, seed uint64) *trainRun
}{
	{name: "completion", state: "Completed", restarts: 0, exact: true, run: func(t *testing.T, seed uint64) *trainRun {
		return newTrainRun(t, trainingJob(3, 2), reconciletest.Options{Seed: seed})
	}},
	{name: "group restart", state: "Completed", restarts: 1, exact: true, run: restartRun},
	{name: "blocking group restart", state: "Completed", restarts: 1, exact: true, run: func(t *testing.T, seed uint64) *trainRun {
		return restartRunWith(t, seed, plaingroup.BlockingRecreate)
	}},
	{name: "launcher fails", state: "Completed", restarts: 1, exact: true, run: func(t *testing.T, seed uint64) *trainRun {
		tr := newTrainRun(t, trainingJob(3, 2), reconciletest.Options{Seed: seed})
		tr.failures[podSlot{"launcher", 0, "0"}] = []int32{1}
		return tr
	}},
	{name: "two blocking restarts", state: "Completed", restarts: 2, run: func(t *testing.T, seed uint64) *trainRun {
		w := trainingJob(4, 3)
		w.FailurePolicy.RestartStrategy = plaingroup.BlockingRecreate
		tr := newTrainRun(t, w, reconciletest.Options{Seed: seed})
		tr.failures[podSlot{"worker", 0, "3"}] = []int32{1, 1}
		tr.failures[podSlot{"worker", 1, "0"}] = []int32{1, 1}
		tr.launcherFrom = 2
		return tr
	}},
	{name: "max restarts", state: "Failed", restarts: 1, run: func(t *testing.T, seed uint64) *trainRun {
		tr := newTrainRun(t, trainingJob(3, 1), reconciletest.Options{Seed: seed})
		tr.failures[podSlot{"worker", 0, "0"}] = []int32{1, 1}
		tr.failures[podSlot{"worker", 1, "2"}] = []int32{1, 1}
		tr.launcherFrom = 99
		return tr
	}},
	{name: "fatal exit code", state: "Failed", restarts: 0, run: func(t *testing.T, seed uint64) *trainRun {
		tr := newTrainRun(t, trainingJob(3, 1), reconciletest.Options{Seed: seed})
		tr.failures[podSlot{"worker", 0, "1"}] = []int32{fatalCode}
		tr.launcherFrom = 99
		return tr
	}},
}

// errCrashed is what the calls of a crashed controller get: they never reach the
// API server.
var errCrashed = errors.New("controller crashed")

// The controller crashes after its n-th API call, at every call of each
// scenario (the calls after it are lost; with lost, the n-th reached the server
// but its answer did not reach the controller), and a new process with empty
// stores takes over on the same cluster: the same end state, nothing counted
// twice, nothing left.
func TestSyncRolesE2ECrash(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			base := sc.run(t, 4)
			want := base.run(80)
			require.Equal(t, sc.state, want.Status.TerminalState)
			require.Equal(t, sc.restarts, want.Status.Restarts)
			calls := len(base.c.Calls())
			require.Positive(t, calls)
			// Every call of the group restart, every fourth of the others (a third
			// of that with -short): the table is quadratic in the calls.
			stride := 4
			if sc.name == "group restart" {
				stride = 1
			}
			if testing.Short() {
				stride *= 3
			}
			for i := range 2 * calls {
				n, lost := i/2+1, i%2 == 1
				if (n == calls && !lost) || (n-1)%stride != 0 {
					continue // no call left to lose, or not in the sample
				}
				t.Run(fmt.Sprintf("call %d lost %v", n, lost), func(t *testing.T) {
					tr := sc.run(t, 4)
					if n%2 == 0 {
						tr.c.SetEventLatency(1500 * time.Millisecond) // and a cache that lags
					}
					crashed := tr.crashAfter(n, lost)
					w := tr.run(120)
					assert.True(t, crashed.Load(), "the controller crashed")
					assert.Equal(t, want.Status.TerminalState, w.Status.TerminalState)
					assert.Equal(t, want.Status.Restarts, w.Status.Restarts)
					assert.Equal(t, totals(want), totals(w), "nothing counted twice, nothing lost")
					assert.Equal(t, base.attempts, tr.attempts)
				})
			}
		})
	}
}

// crashAfter makes the controller crash after its n-th call: the calls after it
// fail without reaching the cluster (with lost, the n-th is made but fails too),
// and at the end of that step a new process with empty stores replaces it. The
// flag it returns says whether the crash happened.
func (tr *trainRun) crashAfter(n int, lost bool) *atomic.Bool {
	var made atomic.Int32
	crashed := &atomic.Bool{}
	tr.c.SetInterceptor(func(reconciletest.Call) reconciletest.Outcome {
		switch m := made.Add(1); {
		case crashed.Load() || m < int32(n):
		case m == int32(n) && lost:
			return reconciletest.Outcome{Err: errCrashed, AfterWrite: true}
		case m > int32(n):
			return reconciletest.Outcome{Err: errCrashed}
		}
		return reconciletest.Outcome{}
	})
	check := tr.d.OnStep
	tr.d.OnStep = func(sr reconciletest.StepResult) {
		check(sr)
		if m := made.Load(); (m > int32(n) || (m == int32(n) && lost)) && !crashed.Load() {
			crashed.Store(true)
			tr.restart()
		}
	}
	return crashed
}

// The owner is deleted at each step of a group restart: the orphan cleanup
// removes every finalizer, and the garbage collector's deletions then remove the
// pods.
func TestSyncRolesE2EOwnerDeleted(t *testing.T) {
	base := restartRun(t, 5)
	base.run(80)
	for step := 1; step <= base.steps; step++ {
		t.Run(fmt.Sprintf("step %d", step), func(t *testing.T) {
			tr := restartRun(t, 5)
			ctx := t.Context()
			for range step {
				_, err := tr.d.Step(ctx, ns, trainName)
				require.NoError(t, err)
			}
			w, err := tr.owners.Get(ns, trainName)
			require.NoError(t, err)
			require.NoError(t, tr.owners.Delete(ns, trainName))
			res := tr.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: &plan.Workload{Namespace: ns, Name: trainName, UID: w.UID}})
			assert.True(t, res.Gone)
			tr.c.CollectGarbage()
			// A late sync finds nothing and forgets the owner.
			synced, _, err := tr.d.Sync(ctx, ns, trainName)
			require.NoError(t, err)
			assert.False(t, synced)
			tr.c.Cache().DeliverAll()
			_, err = tr.d.CleanOrphans(ctx)
			require.NoError(t, err)
			tr.assertNoFinalizer()
			require.NoError(t, tr.c.Kubelet().Step())
			assert.Empty(t, tr.c.ListPods(ns), "the deleted pods are gone")
		})
	}
}

// faultInterceptor fails about one call in seven: server errors, conflicts on the
// status write, timeouts (half of them after the write: the answer is lost).
func faultInterceptor(seed uint64) func(reconciletest.Call) reconciletest.Outcome {
	rnd := rand.New(rand.NewPCG(seed, 7))
	return func(c reconciletest.Call) reconciletest.Outcome {
		if rnd.IntN(7) != 0 {
			return reconciletest.Outcome{}
		}
		switch {
		case c.Op == reconciletest.OpUpdateStatus && rnd.IntN(2) == 0:
			return reconciletest.Outcome{Err: apierrors.NewConflict(schema.GroupResource{Group: trainKind.Group, Resource: "trainingjobs"}, c.Name, errors.New("stale"))}
		case rnd.IntN(2) == 0:
			return reconciletest.Outcome{Err: reconciletest.TimeoutError(), AfterWrite: rnd.IntN(2) == 0}
		}
		return reconciletest.Outcome{Err: reconciletest.ServerError()}
	}
}

// With API faults over a few dozen seeds of the group restarts (a dozen for the
// other scenarios), half of them with a cache that lags
// behind the writes, every scenario keeps its invariants (one write per sync,
// totals never decrease, an attempt gone before the next starts, no pod counted
// twice) and ends as without faults. The group restart also counts exactly as
// without faults; a failed role counts the pods it stopped, which depends on how
// many the faults let it create.
func TestSyncRolesE2EFaults(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			base := sc.run(t, 6)
			want := base.run(80)
			require.Equal(t, sc.state, want.Status.TerminalState)
			require.Equal(t, sc.restarts, want.Status.Restarts)
			failed := 0
			seeds := uint64(12)
			if sc.name == "group restart" || sc.name == "blocking group restart" {
				seeds = 36
			}
			if testing.Short() {
				seeds /= 3
			}
			for seed := range seeds {
				t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
					tr := sc.run(t, 6)
					tr.c.SetInterceptor(faultInterceptor(seed))
					if seed%2 == 1 {
						tr.c.SetEventLatency(time.Duration(seed%5) * 700 * time.Millisecond) // a cache that lags
					}
					w := tr.run(300)
					assert.Equal(t, want.Status.TerminalState, w.Status.TerminalState)
					assert.Equal(t, want.Status.Restarts, w.Status.Restarts)
					assert.Equal(t, base.attempts, tr.attempts)
					if sc.exact {
						assert.Equal(t, totals(want), totals(w))
					}
					for _, c := range tr.c.Calls() {
						if c.Err != nil {
							failed++
						}
					}
				})
			}
			t.Logf("%d calls failed", failed)
			assert.Greater(t, failed, int(seeds), "the faults fired")
		})
	}
}

// BenchmarkSyncRolesRun: a whole run of 1 launcher and 64 workers through
// SyncRoles and ownedpods.Compute on the in-memory cluster, from creation to
// Completed with no finalizer left; API writes and status writes per run are
// reported as metrics.
func BenchmarkSyncRolesRun(b *testing.B) {
	var writes, statusWrites, runs int
	b.ReportAllocs()
	for b.Loop() {
		tr := newTrainRun(b, trainingJob(64, 0), reconciletest.Options{Seed: 8})
		tr.d.OnStep = nil
		if _, err := tr.d.Run(b.Context(), ns, trainName, 50); err != nil {
			b.Fatal(err)
		}
		for _, c := range tr.c.Calls() {
			if c.Written {
				writes++
				if c.Op == reconciletest.OpUpdateStatus {
					statusWrites++
				}
			}
		}
		runs++
	}
	b.ReportMetric(float64(writes)/float64(runs), "writes/run")
	b.ReportMetric(float64(statusWrites)/float64(runs), "statuswrites/run")
}
