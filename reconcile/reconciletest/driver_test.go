package reconciletest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

const managedBy = "jobkit.dev/test"

func newDriver(t *testing.T, c *reconciletest.Cluster) *reconciletest.Driver {
	t.Helper()
	r, err := reconcile.New(reconcile.Config{
		Name: managedBy, Clock: c.Clock(), FinalizerRemovalParallelism: 1,
		Backoff: plainbackoff.Policy{Base: time.Second, Max: 2 * time.Second},
	}, c, reconcile.JobStatusWriter(c))
	require.NoError(t, err)
	return reconciletest.NewDriver(c, r)
}

func managedJob(name string, completions, parallelism int32) *batchv1.Job {
	j := reconciletest.NewJob(ns, name, completions, parallelism)
	j.Spec.ManagedBy = ptr.To(managedBy)
	return j
}

func TestDriverRun(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	d := newDriver(t, c)
	_, err := c.Jobs().Create(managedJob("j", 3, 3))
	require.NoError(t, err)
	c.Kubelet().SetScript(reconciletest.SucceedPods())
	var steps []int
	d.OnStep = func(sr reconciletest.StepResult) { steps = append(steps, sr.Step) }
	rr, err := d.Run(t.Context(), ns, "j", 0)
	require.NoError(t, err)
	assert.Equal(t, int32(3), rr.Workload.Status.Succeeded)
	assert.True(t, d.Done(ns, "j"))
	assert.Len(t, steps, rr.Steps)
	assert.Equal(t, map[corev1.PodPhase]int{corev1.PodSucceeded: 3}, c.CountPods(rr.Workload.Object.(*batchv1.Job)))
	assert.Equal(t, start.Add(time.Duration(rr.Steps)*time.Second), c.Clock().Now(), "one second per step")
}

// The same seed and script give the same run, call for call.
func TestDriverDeterministic(t *testing.T) {
	run := func() []string {
		c := reconciletest.NewCluster(reconciletest.Options{Seed: 42})
		d := newDriver(t, c)
		_, err := c.Jobs().Create(managedJob("j", 6, 3))
		require.NoError(t, err)
		c.Kubelet().SetScript(reconciletest.FailFirst(2, 1))
		c.FailNth(reconciletest.OpCreatePod, 3, nil)
		_, err = d.Run(t.Context(), ns, "j", 200)
		require.NoError(t, err)
		var out []string
		for _, call := range c.Calls() {
			out = append(out, call.String())
		}
		return out
	}
	first := run()
	assert.NotEmpty(t, first)
	assert.Equal(t, first, run())
}

func TestDriverStepLimit(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	d := newDriver(t, c)
	_, err := c.Jobs().Create(managedJob("j", 1, 1))
	require.NoError(t, err)
	rr, err := d.Run(t.Context(), ns, "j", 3) // no kubelet script: the pod never runs
	require.ErrorIs(t, err, reconciletest.ErrStepLimit)
	assert.Equal(t, 3, rr.Steps)
	assert.Contains(t, err.Error(), "Pending")
}

func TestDriverErrors(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	d := newDriver(t, c)
	_, err := c.Jobs().Create(managedJob("j", 1, 1))
	require.NoError(t, err)
	c.FailNth(reconciletest.OpCreatePod, 1, nil)
	c.Kubelet().SetScript(reconciletest.SucceedPods())
	rr, err := d.Run(t.Context(), ns, "j", 20)
	require.NoError(t, err, "a failed creation is retried")
	assert.Equal(t, 1, rr.SyncErrors)
	assert.Error(t, rr.LastError)

	_, err = d.Run(t.Context(), ns, "missing", 5)
	assert.Error(t, err, "a Job that does not exist")
	synced, _, err := d.Sync(t.Context(), ns, "missing")
	assert.False(t, synced)
	assert.NoError(t, err)

	_, err = c.Jobs().Create(managedJob("k", 1, 1))
	require.NoError(t, err)
	c.Kubelet().SetScript(func(*reconciletest.Kubelet, *corev1.Pod) error { return assert.AnError })
	_, err = d.Run(t.Context(), ns, "k", 5)
	assert.ErrorIs(t, err, assert.AnError)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = d.Run(ctx, ns, "k", 5)
	assert.ErrorIs(t, err, context.Canceled)
}
