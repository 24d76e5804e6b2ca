package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// podWrites counts, per pod name, the PatchPod calls of the call log and those
// answered with a Conflict.
type podWrites struct{ patches, conflicts int }

func (e *env) podWrites() map[string]podWrites {
	out := map[string]podWrites{}
	for _, c := range e.c.Calls() {
		if c.Op != reconciletest.OpPatchPod {
			continue
		}
		w := out[c.Name]
		w.patches++
		if apierrors.IsConflict(c.Err) {
			w.conflicts++
		}
		out[c.Name] = w
	}
	return out
}

// selectorJob returns a Job with a manual selector app=<name>, whose template
// carries that label: pods labelled so before the Job exists are its to adopt.
func selectorJob(name string, completions, parallelism int32) *batchv1.Job {
	j := job(name, completions, parallelism)
	j.Spec.ManualSelector = ptr.To(true)
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	j.Spec.Template.Labels = map[string]string{"app": name}
	return j
}

// addOrphan adds a pod labelled app=<app> with no owner, as a Job deleted with the
// Orphan propagation leaves them, started and then ended by end (nil: left running).
func (e *env) addOrphan(t *testing.T, app string, withFinalizer bool, end func(k *reconciletest.Kubelet, name string) error) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: app + "-", Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if withFinalizer {
		pod.Finalizers = []string{finalizers.Name}
	}
	out, err := e.c.AddPod(pod)
	require.NoError(t, err)
	k := e.c.Kubelet()
	require.NoError(t, k.Run(ns, out.Name))
	if end != nil {
		require.NoError(t, end(k, out.Name))
	}
	return out
}

func succeed(k *reconciletest.Kubelet, name string) error { return k.Succeed(ns, name) }

// Adopting a pod and, in the same sync, removing its tracking finalizer (to count it,
// or before deleting it) takes one adoption patch and one removal patch per pod: the
// removal carries the resourceVersion the adoption returned, so the controller's own
// adoption does not make it a Conflict.
func TestSyncAdoptionThenRemovalWrites(t *testing.T) {
	cases := []struct {
		name                     string
		orphans                  int
		withFinalizer            bool
		end                      func(*reconciletest.Kubelet, string) error
		completions, parallelism int32
		wantStatus               batchv1.JobStatus // counters after the first sync
		wantDeleted              int
		wantRemovals             int // finalizer removal patches, one per pod counted or deleted
	}{
		{
			name: "finished orphans with the finalizer are adopted and counted", orphans: 3, withFinalizer: true, end: succeed,
			completions: 3, parallelism: 3, wantStatus: batchv1.JobStatus{Succeeded: 3}, wantRemovals: 3,
		},
		{
			name: "finished orphans without the finalizer are adopted and counted", orphans: 3, end: succeed,
			completions: 3, parallelism: 3, wantStatus: batchv1.JobStatus{Succeeded: 3}, wantRemovals: 3,
		},
		{
			name: "running orphans beyond parallelism are adopted and scaled down", orphans: 3, withFinalizer: true,
			completions: 1, parallelism: 1, wantStatus: batchv1.JobStatus{Active: 1}, wantDeleted: 2, wantRemovals: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for range tc.orphans {
				e.addOrphan(t, "adopt", tc.withFinalizer, tc.end)
			}
			e.create(t, selectorJob("adopt", tc.completions, tc.parallelism))
			e.c.ResetCalls()

			res, err := e.sync(t, "adopt")
			require.NoError(t, err)
			writes := e.podWrites()
			require.Len(t, writes, tc.orphans, "every orphan is patched")
			removals := 0
			for name, w := range writes {
				assert.Zero(t, w.conflicts, "pod %s: patches answered with a Conflict", name)
				assert.LessOrEqual(t, w.patches, 2, "pod %s: patches, want an adoption and at most one finalizer removal", name)
				removals += w.patches - 1
			}
			assert.Equal(t, tc.wantRemovals, removals, "finalizer removal patches")
			assert.Equal(t, tc.wantRemovals, res.FinalizersRemoved, "Result.FinalizersRemoved")
			assert.Equal(t, tc.orphans, res.Adopted, "Result.Adopted")
			assert.Zero(t, res.Released, "Result.Released")
			assert.Equal(t, tc.wantDeleted, res.Deleted, "Result.Deleted")
			assert.Empty(t, res.Retry, "Report.Retry: nothing was left for another sync")
			st := e.apiJob(t, "adopt").Status
			assert.Equal(t, tc.wantStatus.Succeeded, st.Succeeded, "status.succeeded")
			assert.Equal(t, tc.wantStatus.Active, st.Active, "status.active")
			assert.Zero(t, st.Failed, "status.failed")

			// Nothing is left for later syncs: no pod keeps the finalizer without a
			// reason, and a second sync patches nothing.
			e.c.Cache().DeliverAll()
			e.c.ResetCalls()
			_, err = e.sync(t, "adopt")
			require.NoError(t, err)
			assert.Zero(t, e.count(patch), "PatchPod calls of the next sync")
			for _, p := range e.pods() {
				if p.Status.Phase == corev1.PodSucceeded {
					assert.False(t, owner.BatchJob.HasFinalizer(p), "counted pod %s keeps the tracking finalizer", p.Name)
				}
			}
		})
	}
}

// A pod changed by someone else between the cache read and the adoption is not
// stripped with the version the adoption returned: its removal carries the cached
// version, gets a Conflict, and the next sync decides again on what the pod became.
func TestSyncAdoptionOfAChangedPodKeepsThePrecondition(t *testing.T) {
	e := newEnv(t)
	for range 2 {
		e.addOrphan(t, "moved", true, nil)
	}
	e.create(t, selectorJob("moved", 1, 1))
	// One orphan finishes after the cache showed it running: the plan scales it
	// down as a running pod, and must not strip it uncounted.
	pods := e.pods()
	e.c.Cache().DeliverAll()
	for _, p := range pods {
		require.NoError(t, e.c.Kubelet().Succeed(ns, p.Name))
	}
	e.c.ResetCalls()

	res, err := e.sync(t, "moved")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Retry, "a pod changed since the plan: look again")
	assert.Zero(t, res.Deleted, "Result.Deleted: the finished pod is not deleted")
	for _, p := range e.pods() {
		assert.True(t, owner.BatchJob.HasFinalizer(p), "pod %s lost its finalizer before being counted", p.Name)
	}

	for range 3 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "moved")
		require.NoError(t, err)
	}
	st := e.apiJob(t, "moved").Status
	assert.Equal(t, int32(2), st.Succeeded, "both adopted pods succeeded and are counted once each")
	for _, p := range e.pods() {
		assert.False(t, owner.BatchJob.HasFinalizer(p), "pod %s keeps the tracking finalizer", p.Name)
	}
}

// Releasing a pod whose labels no longer match removes the controller reference and
// the tracking finalizer in one patch: the orphan cleanup has nothing left to do.
func TestSyncReleaseWrites(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("rel", 2, 2))
	_, err := e.sync(t, "rel")
	require.NoError(t, err)
	e.runPods(t)
	pods := e.pods()
	require.Len(t, pods, 2)
	moved := pods[0].Name
	_, err = e.c.PatchPodAs(ns, moved, []byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"elsewhere"}}}`))
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.c.ResetCalls()

	res, err := e.sync(t, "rel")
	require.NoError(t, err)
	writes := e.podWrites()
	assert.Equal(t, podWrites{patches: 1}, writes[moved], "writes of the released pod")
	assert.Equal(t, 1, res.Released, "Result.Released")
	assert.Zero(t, res.Adopted, "Result.Adopted")
	assert.Zero(t, res.FinalizersRemoved, "Result.FinalizersRemoved: the release removed it")

	got, err := e.c.GetPod(t.Context(), ns, moved)
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(got), "controller reference of the released pod")
	assert.False(t, owner.BatchJob.HasFinalizer(got), "the released pod keeps the tracking finalizer")

	e.c.Cache().DeliverAll()
	e.c.ResetCalls()
	d, err := e.r.CleanOrphan(t.Context(), e.c.Cache().Pod(ns, moved), nil)
	require.NoError(t, err)
	assert.Equal(t, finalizers.ReasonNoFinalizer, d.Reason, "orphan cleanup of the released pod")
	assert.Zero(t, e.count(patch), "PatchPod calls of the orphan cleanup")
}

// A release is one patch, applied entirely or not at all. Whatever becomes of it
// (refused, timed out before or after the API server applied it), a finished pod
// already recorded in uncountedTerminatedPods is counted exactly once, and a pod that
// left the Job before being recorded is never counted.
func TestSyncReleaseCrashSafety(t *testing.T) {
	cases := []struct {
		name  string
		fault *reconciletest.Fault
	}{
		{name: "accepted"},
		{name: "refused", fault: &reconciletest.Fault{Op: patch, Err: reconciletest.ServerError()}},
		{name: "timed out, not applied", fault: &reconciletest.Fault{Op: patch, Err: reconciletest.TimeoutError()}},
		{name: "timed out, applied", fault: &reconciletest.Fault{Op: patch, Err: reconciletest.TimeoutError(), AfterWrite: true}},
	}
	for _, recorded := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("recorded=%v/%s", recorded, tc.name), func(t *testing.T) {
				e := newEnv(t)
				e.create(t, job("rel", 3, 2))
				_, err := e.sync(t, "rel")
				require.NoError(t, err)
				e.runPods(t)
				pods := e.pods()
				moved := pods[0]
				require.NoError(t, e.c.Kubelet().Succeed(ns, moved.Name))
				if recorded {
					// Recorded as succeeded, but its finalizer removal fails.
					e.c.Cache().DeliverAll()
					e.c.InjectFault(reconciletest.Fault{Op: patch, Err: reconciletest.ServerError()})
					_, err = e.sync(t, "rel")
					require.Error(t, err)
					u := e.apiJob(t, "rel").Status.UncountedTerminatedPods
					require.Contains(t, u.Succeeded, moved.UID, "the pod is recorded")
					e.c.ClearFaults()
				}
				_, err = e.c.PatchPodAs(ns, moved.Name, []byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"elsewhere"}}}`))
				require.NoError(t, err)
				e.c.Cache().DeliverAll()
				e.c.ResetCalls()
				if tc.fault != nil {
					e.c.InjectFault(*tc.fault)
					_, err = e.sync(t, "rel")
					require.Error(t, err, "the release failed")
					assert.Equal(t, 0, e.count(status), "status writes after a failed release")
				}
				for range 6 {
					e.c.Cache().DeliverAll()
					_, err = e.sync(t, "rel")
					require.NoError(t, err)
					e.runPods(t)
				}
				got, err := e.c.GetPod(t.Context(), ns, moved.Name)
				require.NoError(t, err)
				assert.Nil(t, metav1.GetControllerOf(got), "controller reference of the released pod")
				assert.False(t, owner.BatchJob.HasFinalizer(got), "the released pod keeps the tracking finalizer")
				st := e.apiJob(t, "rel").Status
				want := int32(0)
				if recorded {
					want = 1
				}
				assert.Equal(t, want, st.Succeeded, "status.succeeded: the released pod counts once if it was recorded, else never")
				if u := st.UncountedTerminatedPods; u != nil {
					assert.Empty(t, u.Succeeded, "uncounted succeeded")
				}
			})
		}
	}
}

// A pod that changed after the cache showed it is not released in this sync: the
// release carries the cached resourceVersion, gets a Conflict, and the sync stops
// before any status write and asks to be run again; the next sync releases it.
func TestSyncReleaseOfAChangedPod(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("rel", 2, 2))
	_, err := e.sync(t, "rel")
	require.NoError(t, err)
	e.runPods(t)
	moved := e.pods()[0].Name
	_, err = e.c.PatchPodAs(ns, moved, []byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"elsewhere"}}}`))
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	require.NoError(t, e.c.Kubelet().Succeed(ns, moved)) // not in the cache yet
	e.c.ResetCalls()

	res, err := e.sync(t, "rel")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Retry, "Report.Retry")
	assert.Equal(t, []reconciletest.Op{patch}, e.ops(), "calls: the release only")
	got, err := e.c.GetPod(t.Context(), ns, moved)
	require.NoError(t, err)
	assert.NotNil(t, metav1.GetControllerOf(got), "the changed pod is still owned")
	assert.True(t, owner.BatchJob.HasFinalizer(got), "the changed pod keeps its finalizer")

	e.c.Cache().DeliverAll()
	e.c.ResetCalls()
	_, err = e.sync(t, "rel")
	require.NoError(t, err)
	assert.Equal(t, podWrites{patches: 1}, e.podWrites()[moved], "writes of the released pod")
	got, err = e.c.GetPod(t.Context(), ns, moved)
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(got), "controller reference of the released pod")
	assert.False(t, owner.BatchJob.HasFinalizer(got), "the released pod keeps the tracking finalizer")
	assert.Zero(t, e.apiJob(t, "rel").Status.Succeeded, "a pod released before being recorded is not counted")
}

// A sync from a cache that still shows a pod as the orphan it was, after an earlier
// sync adopted it, counted it and removed its finalizer, must not adopt it again:
// the adoption would put the tracking finalizer back on a pod already counted, and
// the next sync would count it a second time. The adoption carries the cached
// resourceVersion, so the API server refuses it (Conflict) and the sync stops.
// Found by the simulator (seed 141 with orphans).
func TestSyncAdoptionFromAStaleCacheCountsOnce(t *testing.T) {
	for _, end := range []struct {
		name string
		f    func(*reconciletest.Kubelet, string) error
		want batchv1.JobStatus
	}{
		{name: "succeeded", f: succeed, want: batchv1.JobStatus{Succeeded: 1}},
		{name: "failed", f: func(k *reconciletest.Kubelet, name string) error { return k.Fail(ns, name, 1) }, want: batchv1.JobStatus{Failed: 1}},
	} {
		t.Run(end.name, func(t *testing.T) {
			e := newEnv(t)
			orphan := e.addOrphan(t, "stale", false, end.f)
			e.create(t, selectorJob("stale", 3, 1))
			e.c.Cache().DeliverAll()
			_, err := e.sync(t, "stale")
			require.NoError(t, err)
			got, err := e.c.GetPod(t.Context(), ns, orphan.Name)
			require.NoError(t, err)
			require.NotNil(t, metav1.GetControllerOf(got), "the first sync adopts the orphan")
			require.False(t, owner.BatchJob.HasFinalizer(got), "the first sync counts the orphan and removes its finalizer")

			// The cache has not seen the adoption: the pod still looks like an orphan.
			e.c.ResetCalls()
			res, err := e.sync(t, "stale")
			require.NoError(t, err)
			got, err = e.c.GetPod(t.Context(), ns, orphan.Name)
			require.NoError(t, err)
			assert.False(t, owner.BatchJob.HasFinalizer(got), "a sync from the stale cache put the tracking finalizer back")
			assert.NotEmpty(t, res.Retry, "Report.Retry: the pod changed since the cache showed it")

			for range 3 {
				e.c.Cache().DeliverAll()
				_, err = e.sync(t, "stale")
				require.NoError(t, err)
			}
			st := e.apiJob(t, "stale").Status
			assert.Equal(t, []int32{end.want.Succeeded, end.want.Failed}, []int32{st.Succeeded, st.Failed}, "succeeded and failed: the adopted pod counted once")
		})
	}
}

// An index whose pod was released gets a new pod even though the name the plan
// derives for it is the released pod's (the released pod is no longer listed, so
// what the plan knows of the index is what it knew when it named that pod): the
// creation is answered AlreadyExists, a read finds the pod no longer the Job's, and
// the next name is taken (released_test.go has the details). Found by the
// simulator (seed 796 with relabelled pods): the Job never finished.
func TestSyncReplacesAReleasedIndexedPod(t *testing.T) {
	e := newEnv(t)
	e.create(t, indexedJob("idx", 1, 1))
	_, err := e.sync(t, "idx")
	require.NoError(t, err)
	pods := e.pods()
	require.Len(t, pods, 1)
	released := pods[0].Name
	_, err = e.c.PatchPodAs(ns, released, []byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"elsewhere"}}}`))
	require.NoError(t, err)

	timeout := e.cfg.UncertainCreationTimeout
	for range 6 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "idx")
		require.NoError(t, err)
		e.c.Clock().Step(timeout / 2)
	}
	var mine []string
	for _, p := range e.pods() {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Name == "idx" {
			mine = append(mine, p.Name)
		}
	}
	require.Len(t, mine, 1, "index 0 has a pod of the Job again")
	assert.NotEqual(t, released, mine[0], "the new pod's name")

	e.runPods(t)
	require.NoError(t, e.c.Kubelet().Succeed(ns, mine[0]))
	for range 3 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "idx")
		require.NoError(t, err)
	}
	st := e.apiJob(t, "idx").Status
	assert.Equal(t, "0", st.CompletedIndexes, "completedIndexes")
	assert.Equal(t, int32(1), st.Succeeded, "succeeded")
}

// A scale-down whose finalizer removal was accepted and whose deletion failed is
// sent again by the next sync from a cache that still shows the finalizer: that
// removal gets a Conflict, which must not forget the accepted removal. Otherwise a
// later sync from the same stale cache takes the pod for a tracked one and, when the
// Job fails, records and counts a pod that was scaled down uncounted. Found by the
// simulator (a stress run with orphans, seed 6697 at fault rate 0.3).
func TestSyncScaleDownRemovalKeptAfterAConflict(t *testing.T) {
	e := newEnv(t)
	j := job("sd", 4, 2)
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](100)
	e.create(t, j)
	_, err := e.sync(t, "sd")
	require.NoError(t, err)
	e.runPods(t)
	_, err = e.c.Jobs().Update(ns, "sd", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	require.NoError(t, err)
	e.c.Cache().DeliverAll()

	e.c.InjectFault(reconciletest.Fault{Op: reconciletest.OpDeletePod, Err: apierrors.NewTooManyRequests("simulated throttling", 1)})
	_, err = e.sync(t, "sd")
	require.Error(t, err, "the deletion of the scaled-down pod fails")
	e.c.ClearFaults()
	var down *corev1.Pod
	for _, p := range e.pods() {
		if !owner.BatchJob.HasFinalizer(p) {
			down = p
		}
	}
	require.NotNil(t, down, "the scaled-down pod lost its finalizer")

	// The cache has seen none of it: it still shows the finalizer.
	_, err = e.sync(t, "sd")
	require.NoError(t, err)
	e.c.Clock().Step(200 * time.Second) // past the deadline: the Job fails
	_, _ = e.sync(t, "sd")              // may stop on a Conflict: only what it wrote matters
	if u := e.apiJob(t, "sd").Status.UncountedTerminatedPods; u != nil {
		assert.NotContains(t, u.Failed, down.UID, "the scaled-down pod is recorded as failed")
	}
	for range 4 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "sd")
		require.NoError(t, err)
		for _, p := range e.pods() {
			if p.DeletionTimestamp != nil && p.Status.Phase == corev1.PodRunning {
				require.NoError(t, e.c.Kubelet().FinishTermination(ns, p.Name))
			}
		}
	}
	st := e.apiJob(t, "sd").Status
	assert.Equal(t, int32(1), st.Failed, "status.failed: the pod running when the Job failed, not the scaled-down one")
}

// Config.ReadOwner: a sync about to adopt reads the owner from the API server first,
// and adopts nothing for an owner that is gone, recreated or being deleted, whatever
// its cache still shows.
func TestSyncReadOwnerBeforeAdoption(t *testing.T) {
	readErr := errors.New("apiserver unavailable")
	tests := []struct {
		name        string
		read        func(c *reconciletest.Cluster) reconcile.OwnerReader
		deleteJob   bool
		wantAdopted int
		wantRequeue bool
		wantErr     error
		// wantNotFound: the sync goes on after adopting, to a status write of a
		// Job that is gone.
		wantNotFound bool
	}{
		{name: "no reader, owner deleted: the stale cache adopts (the gap ReadOwner closes)",
			deleteJob: true, wantAdopted: 2, wantNotFound: true},
		{name: "owner live: adopts", read: func(c *reconciletest.Cluster) reconcile.OwnerReader {
			return reconcile.ObjectOwnerReader(getJob(c), reconcile.JobType.Workload)
		}, wantAdopted: 2},
		{name: "owner deleted: adopts nothing", read: func(c *reconciletest.Cluster) reconcile.OwnerReader {
			return reconcile.ObjectOwnerReader(getJob(c), reconcile.JobType.Workload)
		},
			deleteJob: true, wantRequeue: true},
		{name: "owner recreated under the name: adopts nothing", read: func(*reconciletest.Cluster) reconcile.OwnerReader {
			return func(context.Context, string, string) (*plan.Workload, error) {
				return &plan.Workload{UID: "another"}, nil
			}
		}, wantRequeue: true},
		{name: "owner being deleted: adopts nothing", read: func(c *reconciletest.Cluster) reconcile.OwnerReader {
			return func(ctx context.Context, ns, name string) (*plan.Workload, error) {
				j, err := c.Jobs().Get(ns, name)
				require.NoError(t, err)
				return &plan.Workload{UID: j.UID, Deleting: true}, nil
			}
		}, wantRequeue: true},
		{name: "read fails: error, no write", read: func(*reconciletest.Cluster) reconcile.OwnerReader {
			return func(context.Context, string, string) (*plan.Workload, error) { return nil, readErr }
		}, wantErr: readErr},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cluster *reconciletest.Cluster
			reads := 0
			e := newEnv(t, func(c *reconcile.Config) {
				if tc.read == nil {
					return
				}
				c.ReadOwner = func(ctx context.Context, ns, name string) (*plan.Workload, error) {
					reads++
					return tc.read(cluster)(ctx, ns, name)
				}
			})
			cluster = e.c
			e.addOrphan(t, "adopt", false, succeed)
			e.addOrphan(t, "adopt", false, nil)
			e.create(t, selectorJob("adopt", 2, 2))
			if tc.deleteJob {
				require.NoError(t, e.c.Jobs().Delete(ns, "adopt")) // the cache does not see it yet
			}
			e.c.ResetCalls()

			res, err := e.sync(t, "adopt")
			switch {
			case tc.wantErr != nil:
				require.ErrorIs(t, err, tc.wantErr)
			case tc.wantNotFound:
				require.True(t, apierrors.IsNotFound(err), "error %v", err)
			default:
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantAdopted, res.Adopted, "Result.Adopted")
			assert.Equal(t, tc.wantRequeue, res.Retry != "", "Report.Retry: %q", res.Retry)
			if tc.wantAdopted == 0 {
				assert.Empty(t, e.c.Calls(), "no write at all")
				for _, p := range e.pods() {
					assert.Nil(t, metav1.GetControllerOf(p), "pod %s stays an orphan", p.Name)
				}
			}
			if e.cfg.ReadOwner != nil {
				assert.Equal(t, 1, reads, "one live read per sync that adopts")
			}
		})
	}
}
