package reconcile_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// A finalizer removal the API server accepted stays pending until the cache shows
// the pod without the finalizer. When the pod's event arrives while a sync is
// listing (the informer updates its store and then calls the handler, which lowers
// the pending removal), the list may hold the pod as it was, finalizer included:
// the sync must still treat it as stripped, or it counts the pod a second time (a
// NonIndexed Job then overshoots its completions and stops pods that never ran to
// the end; seen on a real control plane at 5,000 pods).
func TestSyncEventDuringListDoesNotCountTwice(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("twice", 3, 3))
	_, err := e.sync(t, "twice")
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.runPods(t)
	first := e.pods()[0].Name
	require.NoError(t, e.c.Kubelet().Succeed(ns, first))
	e.c.Cache().DeliverAll()

	// Records the success, removes the finalizer (accepted), counts it.
	_, err = e.sync(t, "twice")
	require.NoError(t, err)
	require.Equal(t, int32(1), e.apiJob(t, "twice").Status.Succeeded)

	// The cache has not seen the removal yet; the next sync lists it as it is, and
	// the removal's event is handled right after that list.
	job := e.c.Cache().Job(ns, "twice")
	require.NotNil(t, job)
	stale := e.c.Cache().PodsFor
	list := func(w *plan.Workload) ([]*corev1.Pod, error) {
		pods, err := stale(w)
		e.c.Cache().DeliverAll()
		return pods, err
	}
	_, err = e.r.Sync(t.Context(), plan.JobWorkload(job), list)
	assert.NoError(t, err, "nothing to do: the pod is counted and stripped")
	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "twice")
	require.NoError(t, err)

	succeeded := 0
	for _, p := range e.pods() {
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded++
		}
	}
	assert.Equal(t, 1, succeeded, "one pod succeeded")
	assert.Equal(t, int32(1), e.apiJob(t, "twice").Status.Succeeded, "and it is counted once")
	assert.Zero(t, e.count(reconciletest.OpDeletePod), "no pod stopped for a completion counted twice")
}
