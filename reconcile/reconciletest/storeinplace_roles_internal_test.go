package reconciletest

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

var inPlaceRunKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}

// inPlaceRun is an owner of roles run by Reconciler.SyncRoles, restarted in
// place: a leader of one pod and `workers` Indexed workers, the agents played
// by the test (agent).
type inPlaceRun struct {
	t  *testing.T
	c  *Cluster
	s  *Store[*Run]
	d  *Driver
	ag *agent
}

func newInPlaceRun(t *testing.T, workers int32) *inPlaceRun {
	t.Helper()
	c, s := NewStore(Options{Owner: inPlaceRunKind, Seed: 5}, RunType)
	r, err := reconcile.New(reconcile.Config{Name: "ml.example.com/trainingjob", Owner: inPlaceRunKind, Clock: c.Clock()}, c, c)
	require.NoError(t, err)
	role := func(name string, n int32) ownedpods.Role {
		return ownedpods.Role{Name: name, Spec: plan.Spec{Completions: ptr.To(n), Parallelism: ptr.To(n),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](math.MaxInt32),
			PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{Name: "main", Image: "x"}}}}}}
	}
	_, err = s.Create(&Run{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"}, Spec: ownedpods.Workload{
		Roles:         []ownedpods.Role{role("leader", 1), role("workers", workers)},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3, RestartStrategy: plaingroup.InPlaceRestart}}})
	require.NoError(t, err)
	x := &inPlaceRun{t: t, c: c, s: s}
	x.ag = &agent{t: t, reported: map[string]int32{}, working: map[string]int32{}, group: func() (*int32, *int32) {
		st := x.status()
		return st.InPlace.Previous, st.InPlace.Current
	}}
	c.Kubelet().SetScript(x.ag.script)
	x.d = NewDriver(c, r)
	x.d.SyncFunc = s.SyncFunc(r)
	return x
}

func (x *inPlaceRun) status() ownedpods.Status {
	run, err := x.s.Get("ns", "train")
	require.NoError(x.t, err)
	return run.Status
}

// runUntil steps the rig until done, at most n steps, and returns the steps.
func (x *inPlaceRun) runUntil(what string, n int, done func() bool) int {
	x.t.Helper()
	for i := range n {
		if done() {
			return i
		}
		_, err := x.d.Step(context.Background(), "ns", "train")
		require.NoError(x.t, err)
	}
	x.t.Fatalf("not reached in %d steps: %s", n, what)
	return n
}

// working says whether every pod works on the attempt (the barrier lifted at it).
func (x *inPlaceRun) working(attempt int32, pods int) func() bool {
	return func() bool {
		cur := x.status().InPlace.Current
		return cur != nil && *cur == attempt && len(x.ag.working) == pods
	}
}

func (x *inPlaceRun) uids() map[string]types.UID {
	out := map[string]types.UID{}
	for _, p := range x.c.ListPods("ns") {
		out[p.Name] = p.UID
	}
	return out
}

// A group of a leader and two workers whose pods jobkit owns, restarted in
// place end to end on the rig (Reconciler.SyncRoles), the agents played by
// the test: every pod reports attempt 0 and the barrier lifts at 0; a worker's
// container fails, its agent reports 1, the group's previous attempt becomes
// 0, the other pods restart their containers and report 1, and the barrier
// lifts at 1. No pod is created or deleted, each container restarts once, the
// group's restart counters stay 0 and no worker runs beside one of another
// attempt (the agent's check).
func TestRolesInPlaceRestart(t *testing.T) {
	x := newInPlaceRun(t, 2)
	x.runUntil("every pod working on attempt 0", 60, x.working(0, 3))
	before := x.uids()
	require.Len(t, before, 3)
	for name := range x.ag.working {
		x.ag.crash = max(x.ag.crash, name)
	}
	x.c.ResetCalls()
	x.runUntil("every pod working on attempt 1", 60, x.working(1, 3))
	require.Empty(t, x.ag.crash, "the worker crashed")
	for _, call := range x.c.Calls() {
		require.NotContains(t, []Op{OpCreatePod, OpDeletePod}, call.Op, "call %d on pod %s", call.Seq, call.Name)
	}
	require.Equal(t, before, x.uids(), "no pod replaced")
	for _, p := range x.c.ListPods("ns") {
		require.Equal(t, int32(1), p.Status.ContainerStatuses[0].RestartCount, "pod %s restarted once, in place", p.Name)
	}
	st := x.status()
	require.Equal(t, ptr.To[int32](0), st.InPlace.Previous)
	require.Zero(t, st.Restarts)
	require.Empty(t, st.TerminalState)
}

// A worker pod fails as a whole (its node is lost) while the group is
// restarted in place: jobkit replaces that one pod, as JobSet's Job controller
// would with podReplacementPolicy Failed, in place of recreating the group;
// the replacement's agent reports attempt 1 and the other pods restart in
// place. One pod is created, none deleted by the controller, and the group's
// restart counters stay 0.
func TestRolesInPlaceRestartReplacesAFailedPod(t *testing.T) {
	x := newInPlaceRun(t, 2)
	x.runUntil("every pod working on attempt 0", 60, x.working(0, 3))
	var victim string
	for name := range x.ag.working {
		victim = max(victim, name)
	}
	x.c.ResetCalls()
	require.NoError(t, x.c.Kubelet().Fail("ns", victim, 137))
	delete(x.ag.working, victim)
	x.runUntil("every pod working on attempt 1", 200, x.working(1, 3))
	creates, deletes := 0, 0
	for _, call := range x.c.Calls() {
		if call.Written && call.Op == OpCreatePod {
			creates++
		}
		if call.Written && call.Op == OpDeletePod {
			deletes++
		}
	}
	require.Equal(t, 1, creates, "the failed pod's replacement")
	require.Zero(t, deletes)
	st := x.status()
	require.Zero(t, st.Restarts)
	require.Empty(t, st.TerminalState)
	for _, r := range st.Roles {
		if r.Name == "workers" {
			require.Equal(t, int32(1), r.Failed)
		}
	}
}
