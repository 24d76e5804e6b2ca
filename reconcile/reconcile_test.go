package reconcile_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

type op = reconciletest.Op

const (
	create = reconciletest.OpCreatePod
	del    = reconciletest.OpDeletePod
	patch  = reconciletest.OpPatchPod
	status = reconciletest.OpUpdateJobStatus
)

// The status with new uncounted pods is written before any finalizer goes, the
// counters after, and pods are deleted (finalizer first) only then.
func TestSyncCrashSafeOrder(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("order", 4, 3))
	_, err := e.sync(t, "order")
	require.NoError(t, err)
	if diff := cmp.Diff([]op{status, create, create, create}, e.ops()); diff != "" {
		t.Fatalf("first sync calls (-want +got):\n%s", diff)
	}
	e.runPods(t)
	pods := e.pods()
	require.Len(t, pods, 3)
	require.NoError(t, e.c.Kubelet().Succeed(ns, pods[0].Name))
	_, err = e.c.Jobs().Update(ns, "order", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.c.ResetCalls()

	_, err = e.sync(t, "order")
	require.NoError(t, err)
	calls := e.c.Calls()
	var got []string
	for _, c := range calls {
		got = append(got, string(c.Op)+" "+c.Name)
	}
	// wantActive = min(4-1, 1) = 1 of the 2 running pods.
	require.Len(t, got, 5)
	victim := strings.TrimPrefix(got[4], "DeletePod ")
	require.Contains(t, []string{pods[1].Name, pods[2].Name}, victim, "one of the running pods is deleted")
	want := []string{
		"UpdateJobStatus order",    // record pods[0] as uncounted succeeded
		"PatchPod " + pods[0].Name, // remove its finalizer
		"UpdateJobStatus order",    // count it
		"PatchPod " + victim,       // scale-down: the finalizer goes first...
		"DeletePod " + victim,      // ...so that the deletion is not a failure
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("calls (-want +got):\n%s", diff)
	}
	record := calls[0].Job.Status.UncountedTerminatedPods
	require.NotNil(t, record)
	assert.Equal(t, []types.UID{pods[0].UID}, record.Succeeded, "uncounted succeeded in the first write")
	assert.Equal(t, int32(0), calls[0].Job.Status.Succeeded, "succeeded in the first write")
	assert.Equal(t, int32(1), calls[2].Job.Status.Succeeded, "succeeded in the second write")
	assert.Empty(t, calls[2].Job.Status.UncountedTerminatedPods.Succeeded, "uncounted after settling")

	e.c.Cache().DeliverAll()
	_ = e.c.Kubelet().Step() // the deleted pod terminates
	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "order")
	require.NoError(t, err)
	assert.Equal(t, int32(0), e.apiJob(t, "order").Status.Failed, "a scaled-down pod must not count as failed")
}

// Creations go in batches of 1, 2, 4, ...; after a batch with an error the rest is
// dropped, and the expectations count only what was really created.
func TestSyncSlowStart(t *testing.T) {
	tests := []struct {
		name        string
		failNth     int // 0: no failure
		wantCalls   int
		wantCreated int
	}{
		{name: "no failure", wantCalls: 10, wantCreated: 10},
		{name: "first fails: nothing else tried", failNth: 1, wantCalls: 1, wantCreated: 0},
		{name: "second fails: its batch of 2 completes", failNth: 2, wantCalls: 3, wantCreated: 2},
		{name: "fourth fails: batches 1, 2, 4 tried, 3 dropped", failNth: 4, wantCalls: 7, wantCreated: 6},
		{name: "last of a batch fails", failNth: 7, wantCalls: 7, wantCreated: 6},
		{name: "eighth fails: the last batch of 3", failNth: 8, wantCalls: 10, wantCreated: 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, job("slow", 10, 10))
			if tc.failNth > 0 {
				e.c.FailNth(create, tc.failNth, reconciletest.ServerError())
			}
			res, err := e.sync(t, "slow")
			assert.Equal(t, tc.wantCalls, e.count(create), "CreatePod calls")
			assert.Equal(t, tc.wantCreated, res.Created, "Result.Created")
			assert.Len(t, e.pods(), tc.wantCreated, "pods stored")
			st := e.cfg.Expectations.Get("ns/slow")
			assert.Equal(t, tc.wantCreated, st.Creations, "creations expected")
			if tc.failNth == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, apierrors.IsInternalError(err), "Sync error %v should wrap the server error", err)
			assert.Equal(t, 1, e.events.Count(reconcile.ReasonFailedCreate), "FailedCreate events")
			assert.Equal(t, 1, e.metrics.Get("job_pods_creation_total{new,failed}"), "failed creations metric")

			// Once the cache has seen them, the next sync creates the rest.
			e.c.Cache().DeliverAll()
			require.True(t, e.cfg.Expectations.Satisfied("ns/slow"))
			_, err = e.sync(t, "slow")
			require.NoError(t, err)
			assert.Len(t, e.pods(), 10, "pods after the retry")
			j := e.apiJob(t, "slow")
			assert.Empty(t, jobstatus.FindCondition(j.Status.Conditions, batchv1.JobFailed), "a failed creation must not fail the Job")
		})
	}
}

// Creations raise the expectations before each call; until the cache shows the
// pods, the Job is not managed again, so nothing is created twice.
func TestSyncExpectations(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("exp", 3, 3))
	_, err := e.sync(t, "exp")
	require.NoError(t, err)
	require.Equal(t, 3, e.count(create))
	exp := e.cfg.Expectations
	assert.Equal(t, 3, exp.Get("ns/exp").Creations, "raised once per creation")

	// The cache shows the Job's new status but not the pods yet.
	deliverJobEvents(t, e)
	e.c.ResetCalls()
	res, err := e.sync(t, "exp")
	require.NoError(t, err)
	assert.Zero(t, e.count(create), "no creation while the expectations wait")
	assert.Zero(t, res.Created)

	e.c.Cache().DeliverAll()
	assert.True(t, exp.Satisfied("ns/exp"), "satisfied once the pods are seen")
	_, err = e.sync(t, "exp")
	require.NoError(t, err)
	assert.Zero(t, e.count(create), "no duplicate once the pods are seen")
	assert.Len(t, e.pods(), 3)
}

// deliverJobEvents delivers the queued Job events only.
func deliverJobEvents(t *testing.T, e *env) {
	t.Helper()
	for {
		i := slices.IndexFunc(e.c.Cache().Pending(), func(ev reconciletest.WatchEvent) bool { _, job := ev.Owner.(*batchv1.Job); return job })
		if i < 0 {
			return
		}
		require.NoError(t, e.c.Cache().DeliverAt(i))
	}
}

func TestSyncExpectationsExpire(t *testing.T) {
	e := newEnv(t, func(c *reconcile.Config) { c.ExpectationsTTL = time.Minute })
	e.create(t, job("ttl", 2, 2))
	_, err := e.sync(t, "ttl")
	require.NoError(t, err)
	deliverJobEvents(t, e)
	e.c.ResetCalls()
	_, err = e.sync(t, "ttl")
	require.NoError(t, err)
	assert.Zero(t, e.count(create), "within the TTL")

	e.c.Clock().Step(time.Minute + time.Second)
	deliverJobEvents(t, e) // the status written by the last sync (active=0)
	_, err = e.sync(t, "ttl")
	require.NoError(t, err)
	assert.Equal(t, 2, e.count(create), "after the TTL the pods are lost events and get recreated, as upstream")
}

func TestSyncStatusErrors(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		wantRequeue bool
		wantErr     func(error) bool
	}{
		{name: "conflict requeues without error", err: apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, "job", errors.New("stale")), wantRequeue: true},
		{name: "server error is returned", err: reconciletest.ServerError(), wantErr: apierrors.IsInternalError},
		{name: "throttling is returned", err: apierrors.NewTooManyRequests("simulated throttling", 1), wantErr: apierrors.IsTooManyRequests},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, job("st", 2, 2))
			e.c.InjectFault(reconciletest.Fault{Op: status, Err: tc.err})
			res, err := e.sync(t, "st")
			assert.Equal(t, tc.wantRequeue, res.Retry != "", "Report.Retry: %q", res.Retry)
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "Sync error = %v", err)
				assert.Contains(t, err.Error(), "ns/st")
				assert.Equal(t, 1, strings.Count(err.Error(), "sync job"), "the job is named once: %v", err)
			}
			assert.Zero(t, e.count(create), "nothing is created after a failed status write")
		})
	}
}

func TestSyncNamespaceTerminating(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("nst", 4, 4))
	e.c.TerminateNamespace(ns)
	res, err := e.sync(t, "nst")
	require.NoError(t, err, "a terminating namespace is not an error")
	assert.Equal(t, 1, e.count(create), "the first refusal stops the creations")
	assert.Zero(t, res.Created)
	assert.Zero(t, e.events.Count(reconcile.ReasonFailedCreate), "no FailedCreate event")
	assert.True(t, e.cfg.Expectations.Satisfied("ns/nst"), "the expectation of the refused creation is lowered")
}

// A Job read from a cache older than the last status written is synced as written:
// the write returned the whole Job, newer than the cache's.
func TestSyncStaleCache(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("stale", 2, 2))
	stale := e.c.Jobs().Cached(ns, "stale")
	_, err := e.sync(t, "stale")
	require.NoError(t, err)
	written, err := e.c.Jobs().Get(ns, "stale")
	require.NoError(t, err)
	require.NotEqual(t, stale.ResourceVersion, written.ResourceVersion, "the first sync wrote the status")
	for i := 0; i < len(e.c.Cache().Pending()); { // the pod events only: the cached Job stays stale
		if e.c.Cache().Pending()[i].Pod != nil {
			require.NoError(t, e.c.Cache().DeliverAt(i))
			continue
		}
		i++
	}
	require.Equal(t, stale.ResourceVersion, e.c.Jobs().Cached(ns, "stale").ResourceVersion, "the cached Job is stale")
	require.True(t, e.cfg.Expectations.Satisfied("ns/stale"), "both creations observed")
	e.c.ResetCalls()

	res, err := e.r.Sync(t.Context(), plan.JobWorkload(stale), e.c.Cache().OwnerPods)
	require.NoError(t, err)
	assert.Empty(t, res.Skipped, "a stale cached Job is synced as written, not skipped")
	assert.Zero(t, res.RequeueAfter)
	assert.Empty(t, e.c.Calls(), "the status as written is up to date: nothing to write, nothing to create")
	assert.Zero(t, e.metrics.Get("stale_sync_skips_total{}"))

	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "stale") // the cache has caught up
	require.NoError(t, err)
	assert.Empty(t, e.c.Calls(), "nothing to do once caught up")
}

// Deleting a Job and creating it again under the same name starts fresh, even when
// the old Job's expectations were never fulfilled.
func TestSyncJobRecreatedClearsExpectations(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("again", 2, 2))
	_, err := e.sync(t, "again")
	require.NoError(t, err)
	require.False(t, e.cfg.Expectations.Satisfied("ns/again"), "creations pending")

	require.NoError(t, e.c.Jobs().Delete(ns, "again"))
	_, err = e.c.Jobs().Create(job("again", 1, 1))
	require.NoError(t, err)
	fresh := e.apiJob(t, "again")
	e.c.ResetCalls()
	res, err := e.r.Sync(t.Context(), plan.JobWorkload(fresh), listOf(nil))
	require.NoError(t, err)
	assert.Equal(t, 1, res.Created, "the new Job gets its pod at once")

	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(fresh)})
	st := e.cfg.Expectations.Get("ns/again")
	assert.False(t, st.Exists, "JobDeleted forgets the expectations")
}

// A delete event of the old Job that arrives after the Job recreated under the same
// name was synced must not wipe the new Job's expectations: that would let a stale
// cache create its pods twice.
func TestLateDeleteEventKeepsRecreatedJobState(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("again", 2, 2))
	old := e.apiJob(t, "again")
	require.NoError(t, e.c.Jobs().Delete(ns, "again"))
	_, err := e.c.Jobs().Create(job("again", 2, 2))
	require.NoError(t, err)
	fresh := e.apiJob(t, "again")
	require.NotEqual(t, old.UID, fresh.UID)
	_, err = e.r.Sync(t.Context(), plan.JobWorkload(fresh), listOf(nil))
	require.NoError(t, err)
	require.False(t, e.cfg.Expectations.Satisfied("ns/again"), "creations of the new Job pending")

	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(old)})
	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(old)})
	assert.False(t, e.cfg.Expectations.Satisfied("ns/again"), "the old Job's delete event kept the new Job's expectations")

	e.r.ObserveOwnerEvent(reconcile.OwnerEvent{Old: plan.JobWorkload(fresh)})
	assert.False(t, e.cfg.Expectations.Get("ns/again").Exists, "the new Job's own delete event forgets them")
}

func TestRunToCompletion(t *testing.T) {
	tests := []struct {
		name          string
		job           *batchv1.Job
		wantSucceeded int32
		wantIndexes   string
		wantMode      string
	}{
		{name: "NonIndexed", job: job("plain", 5, 2), wantSucceeded: 5, wantMode: "NonIndexed"},
		{name: "Indexed", job: indexedJob("indexed", 4, 3), wantSucceeded: 4, wantIndexes: "0-3", wantMode: "Indexed"},
		{name: "work queue (no completions)", job: func() *batchv1.Job { j := job("queue", 0, 3); j.Spec.Completions = nil; return j }(), wantSucceeded: 3, wantMode: "NonIndexed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, tc.job)
			e.c.Kubelet().SetScript(reconciletest.SucceedPods())
			rr, err := e.d.Run(t.Context(), ns, tc.job.Name, 100)
			require.NoError(t, err)
			st := rr.Workload.Status
			assert.Equal(t, tc.wantSucceeded, st.Succeeded, "succeeded")
			assert.Zero(t, st.Failed, "failed")
			assert.Zero(t, st.Active, "active")
			assert.Equal(t, tc.wantIndexes, st.CompletedIndexes, "completedIndexes")
			assert.True(t, jobstatus.IsConditionTrue(st.Conditions, batchv1.JobComplete), "Complete condition: %+v", st.Conditions)
			assert.NotNil(t, st.CompletionTime)
			assert.Zero(t, rr.SyncErrors)
			for _, p := range e.pods() {
				assert.False(t, owner.BatchJob.HasFinalizer(p), "pod %s kept the tracking finalizer", p.Name)
			}
			assert.Equal(t, 1, e.events.Count("Completed"))
			assert.Equal(t, 1, e.metrics.Get("jobs_finished_total{"+tc.wantMode+",succeeded,CompletionsReached}"))
			assert.Equal(t, int(tc.wantSucceeded), e.metrics.Get("job_pods_finished_total{"+tc.wantMode+",succeeded}"))
		})
	}
}

func TestRunBackoffLimitExceeded(t *testing.T) {
	e := newEnv(t)
	j := job("failing", 3, 1)
	j.Spec.BackoffLimit = ptr.To[int32](2)
	e.create(t, j)
	e.c.Kubelet().SetScript(reconciletest.FailFirst(-1, 3))
	rr, err := e.d.Run(t.Context(), ns, "failing", 200)
	require.NoError(t, err)
	st := rr.Workload.Status
	cond := jobstatus.FindCondition(st.Conditions, batchv1.JobFailed)
	require.NotNil(t, cond, "Failed condition: %+v", st.Conditions)
	assert.Equal(t, batchv1.JobReasonBackoffLimitExceeded, cond.Reason)
	assert.Equal(t, int32(3), st.Failed, "failed = backoffLimit + 1")
	assert.Zero(t, st.Succeeded)
	assert.Equal(t, 1, e.events.Count(batchv1.JobReasonBackoffLimitExceeded))
	assert.Equal(t, 1, e.metrics.Get("jobs_finished_total{NonIndexed,failed,BackoffLimitExceeded}"))
	for _, p := range e.pods() {
		assert.False(t, owner.BatchJob.HasFinalizer(p), "pod %s kept the tracking finalizer", p.Name)
	}
	// The backoff separated the pods: 1s then 2s after each failure.
	var created []time.Time
	for _, c := range e.c.Calls() {
		if c.Op == create && c.Err == nil {
			created = append(created, c.Time)
		}
	}
	require.Len(t, created, 3)
	assert.GreaterOrEqual(t, created[2].Sub(created[1]), created[1].Sub(created[0]), "the delay grows: %v", created)
}

func TestSyncFinalizerRemovalErrors(t *testing.T) {
	uidInvalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "x", "field is immutable")})
	otherInvalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), "x", "bad")})
	tests := []struct {
		name          string
		err           error
		wantSucceeded int32
		wantPending   bool
		wantErr       bool
	}{
		{name: "accepted", err: nil, wantSucceeded: 1, wantPending: true},
		{name: "NotFound: the pod is gone, counted", err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"), wantSucceeded: 1, wantPending: true},
		{name: "Invalid on metadata.uid: replaced, counted", err: uidInvalid, wantSucceeded: 1, wantPending: true},
		{name: "other Invalid: not counted", err: otherInvalid, wantErr: true},
		{name: "server error: not counted", err: reconciletest.ServerError(), wantErr: true},
		{name: "conflict: not counted", err: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("stale")), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create(t, job("fin", 2, 1))
			_, err := e.sync(t, "fin")
			require.NoError(t, err)
			e.runPods(t)
			pod := e.pods()[0]
			require.NoError(t, e.c.Kubelet().Succeed(ns, pod.Name))
			e.c.Cache().DeliverAll()
			if tc.err != nil {
				e.c.InjectFault(reconciletest.Fault{Op: patch, Err: tc.err})
			}
			_, err = e.sync(t, "fin")
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			st := e.apiJob(t, "fin").Status
			assert.Equal(t, tc.wantSucceeded, st.Succeeded, "succeeded")
			if tc.wantSucceeded == 0 {
				assert.Equal(t, []types.UID{pod.UID}, st.UncountedTerminatedPods.Succeeded, "stays uncounted until its finalizer goes")
			}
			assert.Equal(t, tc.wantPending, e.cfg.FinalizerRemovals.Has("ns/fin", pod.UID), "finalizer removal pending")
		})
	}
}

func TestSyncDeleteErrors(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("del", 2, 2))
	_, err := e.sync(t, "del")
	require.NoError(t, err)
	e.runPods(t)
	_, err = e.c.Jobs().Update(ns, "del", func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.c.InjectFault(reconciletest.Fault{Op: del, Err: reconciletest.ServerError()})
	e.c.ResetCalls()
	res, err := e.sync(t, "del")
	require.Error(t, err)
	assert.True(t, apierrors.IsInternalError(err))
	assert.Equal(t, 1, res.Deleted, "the other deletion went through")
	assert.Equal(t, 1, e.events.Count(reconcile.ReasonFailedDelete))
	assert.Equal(t, 1, e.events.Count(reconcile.ReasonSuccessfulDelete))
	assert.Equal(t, 1, e.events.Count("Suspended"))
	st := e.cfg.Expectations.Get("ns/del")
	assert.Equal(t, 1, st.Deletions, "only the accepted deletion is awaited")
}

func TestSyncAdoptAndRelease(t *testing.T) {
	e := newEnv(t)
	created := e.create(t, job("adopt", 1, 1))
	orphan, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, GenerateName: "orphan-", Labels: created.Spec.Template.Labels,
	}})
	require.NoError(t, err)
	owned, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, GenerateName: "owned-", Labels: map[string]string{"other": "labels"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(created, batchv1.SchemeGroupVersion.WithKind("Job"))},
	}})
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "adopt")
	require.NoError(t, err)

	got, err := e.c.GetPod(t.Context(), ns, orphan.Name)
	require.NoError(t, err)
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref, "orphan adopted")
	assert.Equal(t, created.UID, ref.UID)
	assert.True(t, owner.BatchJob.HasFinalizer(got), "adoption adds the tracking finalizer")

	got, err = e.c.GetPod(t.Context(), ns, owned.Name)
	require.NoError(t, err)
	assert.Nil(t, metav1.GetControllerOf(got), "a pod whose labels no longer match is released")
}

func TestSyncAdoptGonePodRequeues(t *testing.T) {
	e := newEnv(t)
	created := e.create(t, job("gone", 1, 1))
	orphan, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, GenerateName: "orphan-", Labels: created.Spec.Template.Labels,
	}})
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	require.NoError(t, e.c.RemovePod(ns, orphan.Name, ptr.To[int64](0))) // gone before the cache knows
	res, err := e.sync(t, "gone")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Retry, "requeue after a pod vanished during adoption")
	assert.Equal(t, []op{patch}, e.ops(), "nothing else is done with a plan that counted the pod")
}

// A creation that times out after the server wrote it: the expectation is lowered,
// the error returned, and once the cache shows the pod there is no duplicate.
// A creation that times out may have happened: its expectation stays until the
// pod's event arrives (no duplicate from a cache that does not show it yet, and no
// Job finished without it), or until the expectations expire when it did not.
func TestSyncCreateTimeout(t *testing.T) {
	for _, written := range []bool{true, false} {
		t.Run(fmt.Sprintf("written=%v", written), func(t *testing.T) {
			e := newEnv(t, func(c *reconcile.Config) { c.ExpectationsTTL = time.Minute })
			e.create(t, job("timeout", 1, 1))
			e.c.InjectFault(reconciletest.Fault{Op: create, Err: reconciletest.TimeoutError(), AfterWrite: written})
			_, err := e.sync(t, "timeout")
			require.Error(t, err)
			wantPods := 0
			if written {
				wantPods = 1
			}
			require.Len(t, e.pods(), wantPods, "pods in the API")
			exp := e.cfg.Expectations
			assert.False(t, exp.Satisfied("ns/timeout"), "the creation is still expected")

			deliverJobEvents(t, e) // the cache shows the new status, not the pod
			e.c.ResetCalls()
			_, err = e.sync(t, "timeout")
			require.NoError(t, err)
			assert.Zero(t, e.count(create), "no second pod while the first may exist")

			if written {
				e.c.Cache().DeliverAll()
				assert.True(t, exp.Satisfied("ns/timeout"), "satisfied by the pod's event")
			} else {
				e.c.Clock().Step(time.Minute + time.Second)
				deliverJobEvents(t, e)
				assert.True(t, exp.Satisfied("ns/timeout"), "satisfied once the expectations expire")
			}
			_, err = e.sync(t, "timeout")
			require.NoError(t, err)
			assert.Len(t, e.pods(), 1, "exactly one pod")
		})
	}
}

// An Indexed Job names its pods: after a creation that timed out, the pod is read
// back under its name. When the API server had stored it, the creation counts as
// done and its event is waited for, as for any creation (no sync decides on a cache
// without it); when it had not, the next sync sends the same creation at once,
// without waiting for the expectations to expire. The index has exactly one pod.
func TestSyncCreateTimeoutIndexed(t *testing.T) {
	for _, written := range []bool{true, false} {
		t.Run(fmt.Sprintf("written=%v", written), func(t *testing.T) {
			e := newEnv(t) // the expectations TTL stays 5 minutes: it must not matter
			e.create(t, indexedJob("named", 1, 1))
			e.c.InjectFault(reconciletest.Fault{Op: create, Err: reconciletest.TimeoutError(), AfterWrite: written})
			res, err := e.sync(t, "named")
			exp := e.cfg.Expectations
			if written {
				require.NoError(t, err, "the pod read back: the creation happened")
				assert.Equal(t, 1, res.Created, "Result.Created")
				assert.False(t, exp.Satisfied("ns/named"), "the pod's event is waited for")
				assert.Positive(t, res.RequeueAfter, "Result.RequeueAfter: the wait is bounded")
				assert.LessOrEqual(t, res.RequeueAfter, e.cfg.UncertainCreationTimeout, "Result.RequeueAfter")
			} else {
				require.Error(t, err, "the timeout is reported")
				assert.True(t, exp.Satisfied("ns/named"), "a named creation found not stored does not hold the Job")
			}

			deliverJobEvents(t, e) // the cache shows the new status, not the pod
			e.c.ResetCalls()
			res, err = e.sync(t, "named")
			require.NoError(t, err)
			if written {
				assert.Zero(t, e.count(create), "nothing is created while the pod's event is on the way")
			} else {
				require.Equal(t, 1, e.count(create), "the creation is sent again at once")
				assert.NoError(t, e.c.Calls()[len(e.c.Calls())-1].Err)
				assert.Equal(t, 1, res.Created)
			}
			require.Len(t, e.pods(), 1, "exactly one pod for the index")

			e.c.Cache().DeliverAll()
			e.c.ResetCalls()
			_, err = e.sync(t, "named")
			require.NoError(t, err)
			assert.True(t, exp.Satisfied("ns/named"), "expectations once the cache shows the pod")
			assert.Zero(t, e.count(create), "nothing more to create once the cache shows the pod")
			assert.Len(t, e.pods(), 1, "exactly one pod for the index")
		})
	}
}

func TestSyncManagedElsewhere(t *testing.T) {
	e := newEnv(t)
	j := job("other", 1, 1)
	j.Spec.ManagedBy = ptr.To("example.com/other")
	e.create(t, j)
	res, err := e.sync(t, "other")
	require.NoError(t, err)
	assert.Contains(t, res.Skipped, "example.com/other")
	assert.Empty(t, e.c.Calls())

	unset := job("unset", 1, 1)
	unset.Spec.ManagedBy = nil
	e.create(t, unset)
	res, err = e.sync(t, "unset")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Skipped, "a Job without managedBy belongs to kubernetes.io/job-controller")
}

func TestSyncInvalidJob(t *testing.T) {
	e := newEnv(t)
	j := job("bad", 1, 1)
	j.Spec.CompletionMode = ptr.To(batchv1.CompletionMode("Sideways"))
	e.create(t, j)
	res, err := e.sync(t, "bad")
	require.NoError(t, err, "retrying would not help")
	assert.Contains(t, res.Skipped, "Sideways")
	assert.Equal(t, 1, e.events.Count(reconcile.ReasonInvalidJob))
}

func TestSyncArguments(t *testing.T) {
	e := newEnv(t)
	_, err := e.r.Sync(t.Context(), nil, nil)
	assert.ErrorIs(t, err, reconcile.ErrInvalidArgument)
	_, err = e.r.Sync(t.Context(), plan.JobWorkload(job("x", 1, 1)), nil)
	assert.ErrorIs(t, err, reconcile.ErrInvalidArgument)
	listErr := errors.New("cache not synced")
	e.create(t, job("lister", 1, 1))
	_, err = e.r.Sync(t.Context(), plan.JobWorkload(e.c.Jobs().Cached(ns, "lister")), func(*plan.Workload) ([]*corev1.Pod, error) { return nil, listErr })
	assert.ErrorIs(t, err, listErr)
}

func TestSyncMetrics(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("m", 2, 2))
	e.c.Kubelet().SetScript(reconciletest.SucceedPods())
	_, err := e.d.Run(t.Context(), ns, "m", 50)
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	all := e.metrics.All()
	assert.Equal(t, 2, all["job_pods_creation_total{new,succeeded}"])
	assert.Equal(t, 1, all["job_syncs_total{NonIndexed,success,pods_created}"])
	assert.Positive(t, all["job_syncs_total{NonIndexed,success,tracking}"])
	assert.Equal(t, 2, all["terminated_pods_tracking_finalizer_total{add}"])
	assert.Equal(t, 2, all["terminated_pods_tracking_finalizer_total{delete}"])
	var names []string
	for k := range all {
		names = append(names, k[:strings.Index(k, "{")])
	}
	assert.NotContains(t, names, "stale_sync_skips_total")
	assert.True(t, slices.Contains(names, "jobs_finished_total"))
}

// A scale-down picks a pod the cache shows running; if the pod has finished since,
// the finalizer removal (with the cached resourceVersion as a precondition) fails
// and the pod is counted at the next sync instead of being stripped uncounted.
func TestSyncScaleDownOfAPodThatFinished(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("race", 4, 2))
	_, err := e.sync(t, "race")
	require.NoError(t, err)
	e.runPods(t)
	e.c.Cache().DeliverAll()
	_, err = e.c.Jobs().Update(ns, "race", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	require.NoError(t, err)
	deliverJobEvents(t, e) // the cache sees the new parallelism, not what follows
	for _, p := range e.pods() {
		require.NoError(t, e.c.Kubelet().Succeed(ns, p.Name))
	}
	e.c.ResetCalls()
	res, err := e.sync(t, "race")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Retry, "requeue to look again")
	assert.Zero(t, res.Deleted, "the changed pod is not deleted")
	assert.Equal(t, []op{status, patch}, e.ops(), "the status (active, ready), one refused finalizer removal, no deletion")
	assert.Empty(t, e.cfg.FinalizerRemovals.Pending("ns/race"), "the refused removal is not pending")

	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "race")
	require.NoError(t, err)
	assert.Equal(t, int32(2), e.apiJob(t, "race").Status.Succeeded, "both successes counted")
}

// With the default parallelism, API calls of a sync run on several goroutines; run
// under -race, this also checks the Reconciler's and the cluster's locking while
// events are delivered concurrently with the syncs.
func TestParallelCallsAndConcurrentEvents(t *testing.T) {
	e := newEnv(t, func(c *reconcile.Config) { c.FinalizerRemovalParallelism = 0 })
	e.create(t, job("par", 60, 30))
	e.create(t, indexedJob("idx", 40, 20))
	e.c.Kubelet().SetScript(reconciletest.SucceedPods())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			e.c.Cache().DeliverN(5)
		}
	}()
	for range 60 {
		for _, name := range []string{"par", "idx"} {
			if _, _, err := e.d.Sync(t.Context(), ns, name); err != nil {
				t.Errorf("sync %s: %v", name, err)
			}
		}
		require.NoError(t, e.c.Kubelet().Step())
		e.c.Clock().Step(time.Second)
	}
	<-done
	for range 20 {
		e.c.Cache().DeliverAll()
		_, _, err := e.d.Sync(t.Context(), ns, "par")
		require.NoError(t, err)
		_, _, err = e.d.Sync(t.Context(), ns, "idx")
		require.NoError(t, err)
		require.NoError(t, e.c.Kubelet().Step())
		e.c.Clock().Step(time.Second)
	}
	for name, want := range map[string]int32{"par": 60, "idx": 40} {
		j := e.apiJob(t, name)
		assert.True(t, e.d.Done(ns, name), "%s finished: %+v", name, j.Status)
		assert.Equal(t, want, j.Status.Succeeded, "%s succeeded", name)
	}
}

// A delete event that never arrives (a relist finds the pod gone) must not hold the
// Job until the expectations expire: the deletion counts as observed once the pod is
// no longer listed.
func TestSyncLostDeleteEvent(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("lost", 4, 2))
	_, err := e.sync(t, "lost")
	require.NoError(t, err)
	e.runPods(t)
	e.c.Cache().DeliverAll()
	_, err = e.c.Jobs().Update(ns, "lost", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	res, err := e.sync(t, "lost")
	require.NoError(t, err)
	require.Equal(t, 1, res.Deleted, "scale-down to 1")
	exp := e.cfg.Expectations
	require.Equal(t, 1, exp.Get("ns/lost").Deletions)

	// The pod goes (the kubelet ends it; it has no finalizer left) and its delete
	// event is lost; the cache forgets it silently.
	require.NoError(t, e.c.Kubelet().Step())
	cache := e.c.Cache()
	for {
		i := slices.IndexFunc(cache.Pending(), func(ev reconciletest.WatchEvent) bool { return ev.Type == watch.Deleted })
		if i < 0 {
			break
		}
		require.NoError(t, cache.DropAt(i))
	}
	cache.DeliverAll()
	require.False(t, exp.Satisfied("ns/lost"), "the event never came")
	_, err = e.c.Jobs().Update(ns, "lost", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) })
	require.NoError(t, err)
	cache.DeliverAll()

	e.c.ResetCalls()
	res, err = e.sync(t, "lost")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Created, "the replacement is created at once, not after the 5-minute TTL")
	assert.Zero(t, exp.Get("ns/lost").Deletions, "the deletion counts as observed")
}

// A scale-down finalizer patch whose answer is lost leaves unknown whether the pod
// still carries its finalizer. The removal stays pending, so that a stale cache
// showing the finalizer cannot get the pod recorded and counted (as a failure when
// the Job fails) after the patch stripped it; it is settled once the cache shows
// the pod at a newer resourceVersion.
func TestSyncUncertainScaleDownPatch(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprintf("applied=%v", applied), func(t *testing.T) {
			e := newEnv(t)
			j := job("unc", 3, 2)
			j.Spec.BackoffLimit = ptr.To[int32](0)
			e.create(t, j)
			_, err := e.sync(t, "unc")
			require.NoError(t, err)
			e.runPods(t)
			e.c.Cache().DeliverAll()
			_, err = e.c.Jobs().Update(ns, "unc", func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
			require.NoError(t, err)
			e.c.Cache().DeliverAll()

			e.c.InjectFault(reconciletest.Fault{Op: reconciletest.OpPatchPod, Err: reconciletest.TimeoutError(), AfterWrite: applied})
			_, err = e.sync(t, "unc")
			require.Error(t, err, "the patch timed out")
			var victim *corev1.Pod
			for _, p := range e.c.Calls() {
				if p.Op == reconciletest.OpPatchPod {
					victim, err = e.c.GetPod(t.Context(), ns, p.Name)
					require.NoError(t, err)
				}
			}
			require.NotNil(t, victim)
			fr := e.cfg.FinalizerRemovals
			require.True(t, fr.Has("ns/unc", victim.UID), "the uncertain removal stays pending")
			require.Equal(t, !applied, owner.BatchJob.HasFinalizer(victim), "the finalizer in the API")

			// The other pod fails: backoffLimit 0 fails the Job. The cache shows it,
			// but still shows the victim with its finalizer.
			var other string
			for _, p := range e.pods() {
				if p.UID != victim.UID {
					other = p.Name
				}
			}
			require.NoError(t, e.c.Kubelet().Fail(ns, other, 1))
			cache := e.c.Cache()
			for {
				i := slices.IndexFunc(cache.Pending(), func(ev reconciletest.WatchEvent) bool {
					return ev.Owner != nil || ev.Pod.Name == other
				})
				if i < 0 {
					break
				}
				require.NoError(t, cache.DeliverAt(i))
			}
			if !applied {
				// The victim changes (the kubelet reports it ready again): the cache
				// shows it with its finalizer at a newer version, which settles it.
				require.NoError(t, e.c.Kubelet().SetReady(ns, victim.Name, false))
				cache.DeliverAll()
			}
			_, err = e.sync(t, "unc")
			require.NoError(t, err)
			if applied {
				require.True(t, fr.Has("ns/unc", victim.UID), "pending while the cache shows the version the patch was sent for")
				u := e.apiJob(t, "unc").Status.UncountedTerminatedPods
				require.NotContains(t, u.Failed, victim.UID, "the stripped pod is not recorded")
			}
			for range 3 {
				cache.DeliverAll()
				_, err = e.sync(t, "unc")
				require.NoError(t, err)
				require.NoError(t, e.c.Kubelet().Step())
			}
			st := e.apiJob(t, "unc").Status
			require.True(t, hasTrue(st.Conditions, batchv1.JobFailed), "the Job failed: %+v", st.Conditions)
			want := int32(1) // the pod that failed
			if !applied {
				want = 2 // the victim kept its finalizer and ran when the Job failed
			}
			assert.Equal(t, want, st.Failed, "status.failed")
		})
	}
}

// A controller whose pods belong to another kind of owner (Config.Owner): the pods it
// creates carry that kind's controller reference and tracking finalizer, only that
// finalizer counts them, and the Job runs to completion with exact counts and no
// finalizer left. (The workload here is still presented as a batch/v1 Job.)
func TestSyncCustomOwner(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	e := newEnv(t, func(c *reconcile.Config) { c.Owner = kind })
	created := e.create(t, indexedJob("train", 4, 2))
	e.c.Kubelet().SetScript(reconciletest.FailFirst(1, 3))
	res, err := e.d.Run(t.Context(), ns, "train", 200)
	require.NoError(t, err, "run: %+v", res)
	job := res.Workload.Object.(*batchv1.Job)
	assert.True(t, jobstatus.IsConditionTrue(job.Status.Conditions, batchv1.JobComplete), "Complete")
	assert.Equal(t, int32(4), job.Status.Succeeded)
	assert.Equal(t, int32(1), job.Status.Failed)
	assert.Equal(t, "0-3", job.Status.CompletedIndexes)
	pods := e.pods()
	require.Len(t, pods, 5)
	for _, p := range pods {
		ref := kind.ControllerOf(p)
		require.NotNil(t, ref, "pod %s: controller reference %v, want a %v", p.Name, p.OwnerReferences, kind)
		assert.Equal(t, created.UID, ref.UID, "pod %s: owner UID", p.Name)
		assert.Nil(t, owner.BatchJob.ControllerOf(p), "pod %s is not a batch Job's", p.Name)
		assert.False(t, kind.HasFinalizer(p), "pod %s keeps the tracking finalizer after completion", p.Name)
		assert.NotContains(t, p.Finalizers, batchv1.JobTrackingFinalizer, "pod %s: the batch finalizer is never added", p.Name)
	}
	for _, c := range e.c.Calls() {
		if c.Op == create {
			assert.Contains(t, c.Pod.Finalizers, kind.Finalizer, "created pod %s carries the owner's finalizer", c.Pod.Name)
		}
	}
}

func TestConfigOwnerInvalid(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	_, err := reconcile.New(reconcile.Config{Name: testName, Owner: owner.Kind{Kind: "X"}}, c, c)
	require.ErrorIs(t, err, reconcile.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "Owner")
	assert.Contains(t, err.Error(), "Finalizer")
}

// The orphan cleanup of another kind of owner removes that kind's finalizer, from
// the owner's facts.
func TestCleanOrphanOfCustomOwner(t *testing.T) {
	kind := owner.Kind{Group: "ml.example.com", Version: "v1alpha1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}
	e := newEnv(t, func(c *reconcile.Config) { c.Owner = kind })
	gone := &metav1.ObjectMeta{Name: "t", UID: "t-gone"}
	pod, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w-0",
		OwnerReferences: []metav1.OwnerReference{kind.NewControllerRef(gone)},
		Finalizers:      []string{"example.com/keep", kind.Finalizer}}})
	require.NoError(t, err)

	live := &finalizers.OrphanOwner{UID: "t-gone", ManagedBy: testName}
	d, err := e.r.CleanOrphan(t.Context(), pod, live)
	require.NoError(t, err)
	assert.False(t, d.Remove, "a live, unfinished owner counts its pod: %+v", d)

	d, err = e.r.CleanOrphan(t.Context(), pod, nil)
	require.NoError(t, err)
	assert.True(t, d.Remove, "decision %+v", d)
	stored, err := e.c.GetPod(t.Context(), ns, "w-0")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/keep"}, stored.Finalizers, "only the owner's finalizer goes")
}

// The sync that strips a finished pod finishes its Job at once; the Job's event can
// reach an orphan cleanup before the pod's, which still shows the finalizer: the
// cleanup sends no second patch for a removal the sync had accepted.
func TestCleanOrphanLeavesAcceptedRemovalAlone(t *testing.T) {
	e := newEnv(t)
	e.create(t, job("done", 1, 1))
	_, err := e.sync(t, "done")
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	require.Len(t, e.pods(), 1)
	name := e.pods()[0].Name
	require.NoError(t, e.c.Kubelet().Succeed(ns, name))
	e.c.Cache().DeliverAll()

	_, err = e.sync(t, "done")
	require.NoError(t, err)
	finished := e.apiJob(t, "done")
	_, done := jobstatus.Finished(&finished.Status)
	require.True(t, done, "the Job finished in the sync that stripped its pod: %+v", finished.Status)
	cached := e.c.Cache().Pod(ns, name)
	require.NotNil(t, cached)
	require.True(t, owner.BatchJob.HasFinalizer(cached), "the cache has not seen the removal yet")

	e.c.ResetCalls()
	d, err := e.r.CleanOrphan(t.Context(), cached, finalizers.JobOwner(finished))
	require.NoError(t, err)
	assert.Equal(t, finalizers.OrphanDecision{Reason: finalizers.ReasonRemovalInFlight, Message: finalizers.ReasonRemovalInFlight}, d)
	assert.Zero(t, e.count(reconciletest.OpPatchPod), "no second removal patch: %v", e.ops())
}

// TestImmutablePodsSameCalls runs Jobs to their end with and without
// Config.ImmutablePods (a plan.FactCache per owner, fed by reconciletest's
// Cache, which stores each pod version as a new object): the same calls reach
// the cluster, in the same order, with the same patches.
func TestImmutablePodsSameCalls(t *testing.T) {
	tests := []struct {
		name   string
		job    func() *batchv1.Job
		script func() func(*reconciletest.Kubelet, *corev1.Pod) error
	}{
		{"NonIndexed", func() *batchv1.Job { return job("plain", 8, 3) }, reconciletest.SucceedPods},
		{"NonIndexed with failures", func() *batchv1.Job { return job("failing", 6, 3) }, func() func(*reconciletest.Kubelet, *corev1.Pod) error {
			return reconciletest.FailFirst(3, 1)
		}},
		{"Indexed", func() *batchv1.Job { return indexedJob("indexed", 7, 3) }, reconciletest.SucceedPods},
		{"Indexed with failures", func() *batchv1.Job { return indexedJob("ixfail", 5, 5) }, func() func(*reconciletest.Kubelet, *corev1.Pod) error {
			return reconciletest.FailFirst(2, 1)
		}},
	}
	type call struct{ Op, Name, Patch, Err string }
	run := func(t *testing.T, immutable bool, j *batchv1.Job, script func(*reconciletest.Kubelet, *corev1.Pod) error) ([]call, batchv1.JobStatus) {
		e := newEnv(t, func(c *reconcile.Config) { c.ImmutablePods = immutable })
		e.create(t, j)
		e.c.Kubelet().SetScript(script)
		rr, err := e.d.Run(t.Context(), ns, j.Name, 200)
		require.NoError(t, err)
		var calls []call
		for _, c := range e.c.Calls() {
			calls = append(calls, call{Op: string(c.Op), Name: c.Name, Patch: string(c.Patch), Err: fmt.Sprint(c.Err)})
		}
		return calls, rr.Workload.Status
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCalls, wantStatus := run(t, false, tc.job(), tc.script())
			gotCalls, gotStatus := run(t, true, tc.job(), tc.script())
			require.NotEmpty(t, wantCalls)
			assert.Empty(t, cmp.Diff(wantCalls, gotCalls), "calls (-without +with ImmutablePods)")
			assert.Empty(t, cmp.Diff(wantStatus, gotStatus), "final status (-without +with ImmutablePods)")
		})
	}
}
