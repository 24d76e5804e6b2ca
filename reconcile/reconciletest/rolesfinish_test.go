package reconciletest_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A group that finished with its workers still running is SyncRoles' to stop
// and count, not the orphan cleanup's: the store presents the finished owner as
// production does (never finished). Here the launcher succeeds while the workers
// run, the stop of the workers fails, and a worker then fails by itself: the
// Driver's orphan cleanup frees no worker, SyncRoles records and counts the
// failed one and stops the others, and no worker is left running without the
// finalizer and without a deletion. (Presented with a Complete condition, as
// the store once did, the owner lost every worker to the orphan cleanup: the
// failed one was never counted.)
func TestRolesFinishedGroupStopsAndCountsItsRunningPods(t *testing.T) {
	const workers = 3
	ctx := t.Context()
	c, owners := reconciletest.NewStore(reconciletest.Options{Owner: rolesKind}, reconciletest.RunType)
	r, err := reconcile.New(reconcile.Config{Name: "test", Owner: rolesKind, Clock: c.Clock()}, c, c)
	require.NoError(t, err)
	tmpl := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "trainer"}}}}
	}
	_, err = owners.Create(runOf(&ownedpods.Workload{
		Namespace: "ns", Name: "train", ManagedBy: ptr.To("test"),
		Roles: []ownedpods.Role{
			{Name: "worker", Spec: plan.Spec{Template: tmpl(), Completions: ptr.To[int32](workers), Parallelism: ptr.To[int32](workers),
				CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimitPerIndex: ptr.To[int32](1)}},
			{Name: "launcher", Spec: plan.Spec{Template: tmpl(), BackoffLimit: ptr.To[int32](0)},
				DependsOn: []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}},
		},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
	}))
	require.NoError(t, err)

	var launcherWins, stopFails atomic.Bool
	c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodPending:
			if err := k.Run(p.Namespace, p.Name); err != nil {
				return err
			}
			return k.SetReady(p.Namespace, p.Name, true)
		case p.Status.Phase == corev1.PodRunning && launcherWins.Load() && role(p) == "launcher":
			return k.Succeed(p.Namespace, p.Name)
		}
		return nil
	})
	c.SetInterceptor(func(call reconciletest.Call) reconciletest.Outcome {
		if stopFails.Load() && (call.Op == reconciletest.OpPatchPod || call.Op == reconciletest.OpDeletePod) &&
			strings.HasPrefix(call.Name, "train-worker-") {
			return reconciletest.Outcome{Err: reconciletest.ServerError()}
		}
		return reconciletest.Outcome{}
	})
	d := reconciletest.NewDriver(c, r)
	d.SyncFunc, d.DoneFunc = owners.SyncFunc(r), owners.DoneFunc()
	stored := func() *reconciletest.Run {
		w, err := owners.Get("ns", "train")
		require.NoError(t, err)
		return w
	}
	// cleanOrphans is the Driver's orphan cleanup: it must free no pod of the
	// owner, finished or not.
	cleanOrphans := func(when string) {
		n, err := d.CleanOrphans(ctx)
		require.NoError(t, err)
		assert.Zero(t, n, "%s: the orphan cleanup freed pods of the owner", when)
	}

	// The workers run and are ready, then the launcher runs.
	for step := 0; len(podsOf(c, "launcher", corev1.PodRunning)) == 0; step++ {
		require.Less(t, step, 20, "the launcher never ran")
		_, err := d.Step(ctx, "ns", "train")
		require.NoError(t, err)
		cleanOrphans("starting")
	}
	require.Len(t, podsOf(c, "worker", corev1.PodRunning), workers)

	// The launcher succeeds; the group completes and its stop of the workers
	// fails: they run on, with their finalizer.
	launcherWins.Store(true)
	stopFails.Store(true)
	for step := 0; stored().Status.TerminalState == ""; step++ {
		require.Less(t, step, 20, "the group never completed")
		_, err := d.Step(ctx, "ns", "train")
		require.NoError(t, err)
	}
	stopFails.Store(false)
	require.Equal(t, "Completed", stored().Status.TerminalState)
	running := podsOf(c, "worker", corev1.PodRunning)
	require.Len(t, running, workers, "the workers still run")
	for _, p := range running {
		require.True(t, rolesKind.HasFinalizer(p), "worker %s keeps its finalizer", p.Name)
	}

	// A worker fails by itself after the group completed, before any sync.
	require.NoError(t, c.Kubelet().Fail("ns", running[0].Name, 1))
	c.Cache().DeliverAll()
	cleanOrphans("the group completed, its workers still run")

	// The Driver runs the owner to its end, the orphan cleanup after each step.
	for step := 0; ; step++ {
		require.Less(t, step, 30, "the owner never ended")
		_, err := d.Step(ctx, "ns", "train")
		require.NoError(t, err)
		cleanOrphans("stopping")
		for _, p := range c.ListPods("ns") {
			terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			assert.True(t, terminal || p.DeletionTimestamp != nil || rolesKind.HasFinalizer(p),
				"step %d: pod %s runs with no finalizer and no deletion", step, p.Name)
		}
		if done, _ := d.DoneFunc("ns", "train"); done {
			break
		}
	}
	w := stored()
	for _, p := range c.ListPods("ns") {
		terminal := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		assert.True(t, terminal || p.DeletionTimestamp != nil, "pod %s is left %s", p.Name, p.Status.Phase)
		assert.False(t, rolesKind.HasFinalizer(p), "pod %s keeps the finalizer", p.Name)
	}
	for _, rs := range w.Status.Roles {
		switch rs.Name {
		case "worker":
			assert.Equal(t, int32(1), rs.Failed, "the worker that failed by itself is counted, the stopped ones are not")
			assert.Zero(t, rs.Succeeded)
		case "launcher":
			assert.Equal(t, int32(1), rs.Succeeded)
		}
		assert.Zero(t, rs.Job.Active, "%s: active", rs.Name)
		assert.Zero(t, ptr.Deref(rs.Job.Ready, 0), "%s: ready", rs.Name)
		if u := rs.Job.UncountedTerminatedPods; u != nil {
			assert.Empty(t, append(u.Succeeded, u.Failed...), "%s: uncounted", rs.Name)
		}
	}
}

func role(p *corev1.Pod) string { return p.Labels[plaingroup.LabelRoleName] }

// podsOf lists the pods of role in phase, not being deleted.
func podsOf(c *reconciletest.Cluster, name string, phase corev1.PodPhase) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.ListPods("ns") {
		if role(p) == name && p.Status.Phase == phase && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
