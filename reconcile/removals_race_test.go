package reconcile_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

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
	job := e.c.Jobs().Cached(ns, "twice")
	require.NotNil(t, job)
	stale := e.c.Cache().OwnerPods
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

// A finished pod stays finished: its finalizer removal carries no resourceVersion
// precondition, so a change the cache has not seen yet (a kubelet's last status
// write, a label) neither refuses the removal nor delays its count. On a real
// control plane, kwok's last writes to finished pods made about 1% of the removals
// of a 5,000-pod Job fail with a Conflict before.
func TestSyncRemovesTheFinalizerOfAFinishedPodThatChangedSince(t *testing.T) {
	for _, tc := range []struct {
		name   string
		finish func(e *env, pod string) error
		want   func(st batchv1.JobStatus) int32
	}{
		{"succeeded", func(e *env, pod string) error { return e.c.Kubelet().Succeed(ns, pod) }, func(st batchv1.JobStatus) int32 { return st.Succeeded }},
		{"failed", func(e *env, pod string) error { return e.c.Kubelet().Fail(ns, pod, 1) }, func(st batchv1.JobStatus) int32 { return st.Failed }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, job("changed", 2, 2))
			_, err := e.sync(t, "changed")
			require.NoError(t, err)
			e.c.Cache().DeliverAll()
			e.runPods(t)
			pod := e.pods()[0].Name
			require.NoError(t, tc.finish(e, pod))
			e.c.Cache().DeliverAll()
			// Changed again after the cache showed it finished.
			_, err = e.c.PatchPod(t.Context(), ns, pod, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"late":"write"}}}`))
			require.NoError(t, err)
			e.c.ResetCalls()

			res, err := e.sync(t, "changed")
			require.NoError(t, err)
			assert.Empty(t, res.Retry)
			assert.Equal(t, 1, res.FinalizersRemoved)
			assert.Equal(t, int32(1), tc.want(e.apiJob(t, "changed").Status), "counted in this sync")
			for _, c := range e.c.Calls() {
				if c.Op == reconciletest.OpPatchPod {
					assert.NotContains(t, string(c.Patch), "resourceVersion", "no resourceVersion precondition")
					assert.Contains(t, string(c.Patch), `"uid"`, "the UID precondition stays")
				}
			}
		})
	}
}

// A pod being deleted has not finished: its finalizer removal carries the cached
// resourceVersion, so that it is counted by the state the plan saw. When the pod has
// changed since (the garbage collector, a kubelet), the API server refuses the removal
// with a Conflict: the sync is not failed for it (no error, no error backoff), it
// asks to look again soon, and the next sync, from a cache that shows the change,
// removes the finalizer and counts the pod once.
func TestSyncRetriesTheRemovalOfADeletingPodThatChangedSince(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("deleting", 2, 2))
	_, err := e.sync(t, "deleting")
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.runPods(t)
	e.c.Cache().DeliverAll()
	victim := e.pods()[0]
	require.NoError(t, e.c.DeletePod(t.Context(), ns, victim.Name, victim.UID))
	e.c.Cache().DeliverAll()
	// Changed again after the cache showed it being deleted.
	_, err = e.c.PatchPod(t.Context(), ns, victim.Name, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"late":"write"}}}`))
	require.NoError(t, err)
	e.c.ResetCalls()

	res, err := e.sync(t, "deleting")
	require.NoError(t, err, "a Conflict on the resourceVersion precondition does not fail the sync")
	assert.NotEmpty(t, res.Retry, "it asks to be synced again")
	assert.Positive(t, res.RequeueAfter)
	assert.Zero(t, res.FinalizersRemoved)
	assert.Equal(t, 1, e.count(reconciletest.OpPatchPod), "one removal sent, and refused")
	st := e.apiJob(t, "deleting").Status
	require.NotNil(t, st.UncountedTerminatedPods)
	assert.Equal(t, []types.UID{victim.UID}, st.UncountedTerminatedPods.Failed, "recorded, not yet counted")
	assert.Zero(t, st.Failed)

	e.c.Cache().DeliverAll()
	res, err = e.sync(t, "deleting")
	require.NoError(t, err)
	assert.Empty(t, res.Retry)
	assert.Equal(t, 1, res.FinalizersRemoved)
	st = e.apiJob(t, "deleting").Status
	assert.Equal(t, int32(1), st.Failed, "counted once")
	if st.UncountedTerminatedPods != nil {
		assert.Empty(t, st.UncountedTerminatedPods.Failed)
	}
}
