package reconcile_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// Replacing a released live pod of an Indexed Job (issues 20 and 37). The plan
// derives the replacement's name from what the cache shows of the index, which is
// what it showed when it named the released pod; the plan that releases a pod and
// the Reconciler that released it know the name is taken, so the replacement gets
// the next name of the index's sequence at once: one creation, none refused. A name
// nobody remembers (a restart, a pod released by someone else) is refused with
// AlreadyExists; a live read of the pod then tells that it is not the Job's, and the
// next name is created in the same sync; when the read finds the Job's own pod (an
// earlier creation the cache does not show yet), nothing is created.

// releaseFixture is an Indexed Job of three running, ready pods whose pod of index 1
// was relabelled so that it no longer matches the selector, with the cache up to
// date.
type releaseFixture struct {
	e        *env
	job      *batchv1.Job
	released *corev1.Pod
}

func newReleaseFixture(t *testing.T) *releaseFixture {
	t.Helper()
	return newReleaseFixtureBy(t, false)
}

// newReleaseFixtureBy is newReleaseFixture where, with byOther, someone else also
// removed the pod's controller reference: the Job's controller never releases it
// and never learns its name is taken but from a refused creation.
func newReleaseFixtureBy(t *testing.T, byOther bool) *releaseFixture {
	t.Helper()
	e := newEnv(t)
	j := e.create(t, indexedJob("rel", 3, 3))
	_, err := e.sync(t, "rel")
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.runPods(t)
	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "rel")
	require.NoError(t, err)
	st := e.apiJob(t, "rel").Status
	require.Equal(t, []int32{3, 3}, []int32{st.Active, ptr.Deref(st.Ready, 0)}, "active and ready before the release")
	f := &releaseFixture{e: e, job: j}
	f.released = f.livePods(t)[1][0]
	patch := `{"metadata":{"labels":{"` + batchv1.ControllerUidLabel + `":"elsewhere"}}}`
	if byOther {
		patch = `{"metadata":{"labels":{"` + batchv1.ControllerUidLabel + `":"elsewhere"},"ownerReferences":null}}`
	}
	_, err = e.c.PatchPodAs(ns, f.released.Name, []byte(patch))
	require.NoError(t, err)
	e.c.Cache().DeliverAll()
	e.c.ResetCalls()
	return f
}

// livePods returns the stored pods controlled by the Job, not finished and not being
// deleted, by completion index.
func (f *releaseFixture) livePods(t *testing.T) map[int][]*corev1.Pod {
	t.Helper()
	out := map[int][]*corev1.Pod{}
	for _, p := range f.e.pods() {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != f.job.UID || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		ix, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
		require.NoError(t, err, "index of pod %s", p.Name)
		out[ix] = append(out[ix], p)
	}
	return out
}

// checkOnePodPerIndex fails unless each index has exactly one live pod of the Job.
func (f *releaseFixture) checkOnePodPerIndex(t *testing.T) {
	t.Helper()
	live := f.livePods(t)
	for ix := range 3 {
		assert.Len(t, live[ix], 1, "live pods of the Job for index %d", ix)
	}
}

// checkReleased checks that the released pod is still there, no longer the Job's.
func (f *releaseFixture) checkReleased(t *testing.T) {
	t.Helper()
	got, err := f.e.c.GetPod(t.Context(), ns, f.released.Name)
	require.NoError(t, err, "the released pod")
	assert.Equal(t, f.released.UID, got.UID, "the released pod is the same pod")
	assert.Nil(t, metav1.GetControllerOf(got), "controller reference of the released pod")
}

// creates returns the outcomes of the CreatePod calls since the last ResetCalls:
// the names written, and how many were refused.
func (f *releaseFixture) creates() (written []string, refused int) {
	for _, c := range f.e.c.Calls() {
		if c.Op != reconciletest.OpCreatePod {
			continue
		}
		if c.Written {
			written = append(written, c.Name)
		} else {
			refused++
		}
	}
	return written, refused
}

// status returns active, ready and terminating as stored.
func (f *releaseFixture) status(t *testing.T) []int32 {
	t.Helper()
	st := f.e.apiJob(t, "rel").Status
	return []int32{st.Active, ptr.Deref(st.Ready, -1), ptr.Deref(st.Terminating, -1)}
}

func TestSyncReplacesAReleasedLivePodAtOnce(t *testing.T) {
	f := newReleaseFixture(t)
	e := f.e
	res, err := e.sync(t, "rel")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Released, "Result.Released")
	assert.Equal(t, 1, res.Created, "Result.Created: the replacement, under the next name")
	written, refused := f.creates()
	assert.Zero(t, refused, "creations refused: the released pod's name is known to be taken")
	require.Len(t, written, 1, "pods created")
	assert.Equal(t, indexes.NextPodName("rel", string(f.job.UID), 1, f.released.Name), written[0],
		"the replacement's name: the next of the index's sequence")
	f.checkOnePodPerIndex(t)
	f.checkReleased(t)
	assert.Equal(t, []int32{3, 2, 0}, f.status(t), "active, ready, terminating: the replacement counted, not ready yet")

	// The next syncs keep everything as it is: the expectations are met by the
	// replacement's event, the name is not tried again.
	e.c.ResetCalls()
	for range 2 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "rel")
		require.NoError(t, err)
	}
	written, refused = f.creates()
	assert.Empty(t, written, "pods created by the later syncs")
	assert.Zero(t, refused, "creations refused in the later syncs")
	assert.True(t, e.cfg.Expectations.Satisfied("ns/rel"), "expectations")
	f.checkOnePodPerIndex(t)
	assert.Equal(t, []int32{3, 2, 0}, f.status(t), "active, ready, terminating")
}

// A controller whose in-memory state is lost (a restart, another replica taking
// over) while its cache shows the release but not yet the replacement: the plan
// derives the released pod's name again, the read finds it taken, the next name is
// refused too and read back as the Job's own pod: nothing is created.
func TestSyncReplacementOfAReleasedPodUnderAStaleCache(t *testing.T) {
	f := newReleaseFixture(t)
	e := f.e
	_, err := e.sync(t, "rel")
	require.NoError(t, err)
	written, _ := f.creates()
	require.Len(t, written, 1, "the replacement")
	deliverAllBut(t, e, written[0])
	restart(t, e)
	e.c.ResetCalls()

	res, err := e.sync(t, "rel")
	require.NoError(t, err)
	assert.Zero(t, res.Created, "Result.Created")
	assert.False(t, e.cfg.Expectations.Satisfied("ns/rel"), "the replacement, found by the read, is waited for")
	assert.Positive(t, res.RequeueAfter, "Result.RequeueAfter: the wait is bounded")
	got, refused := f.creates()
	assert.Empty(t, got, "pods created from the stale cache")
	assert.Equal(t, 2, refused, "creations refused: the released pod's name, then the replacement's")
	f.checkOnePodPerIndex(t)
	assert.Equal(t, []int32{3, 2, 0}, f.status(t), "active, ready, terminating")

	e.c.ResetCalls()
	for range 2 {
		e.c.Cache().DeliverAll()
		_, err = e.sync(t, "rel")
		require.NoError(t, err)
	}
	got, refused = f.creates()
	assert.Empty(t, got, "pods created once the cache caught up")
	assert.Zero(t, refused, "creations refused once the cache caught up")
	f.checkOnePodPerIndex(t)
	assert.Equal(t, []int32{3, 2, 0}, f.status(t), "active, ready, terminating")
}

// The replacement's creation times out after the API server stored it. The next
// sync, from a cache that does not show it, names it again (the released pod's name
// is known to be taken, or found taken again after a restart) and is refused: the
// read finds the Job's own pod, and the index never gets a second pod.
func TestSyncReplacementOfAReleasedPodAfterATimeout(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run("restarted="+strconv.FormatBool(restarted), func(t *testing.T) {
			f := newReleaseFixture(t)
			e := f.e
			e.c.InjectFault(reconciletest.Fault{
				Op:  reconciletest.OpCreatePod, // the replacement's creation
				Err: reconciletest.TimeoutError(), AfterWrite: true,
			})
			res, err := e.sync(t, "rel")
			require.NoError(t, err, "the timed-out creation, read back")
			assert.Equal(t, 1, res.Created, "Result.Created")
			written, refused := f.creates()
			require.Len(t, written, 1, "the replacement stored despite the timeout")
			assert.Zero(t, refused, "creations refused")
			deliverAllBut(t, e, written[0])
			if restarted {
				restart(t, e) // the expectation of the replacement is lost
			} else {
				// Without the expectation the replacement's read back keeps, the
				// sync would decide on a cache without the replacement.
				assert.False(t, e.cfg.Expectations.Satisfied("ns/rel"), "the replacement's event is waited for")
				e.c.Clock().Step(e.cfg.UncertainCreationTimeout) // as if that event was lost
			}
			e.c.ResetCalls()

			_, err = e.sync(t, "rel")
			require.NoError(t, err)
			got, refusedAgain := f.creates()
			assert.Empty(t, got, "pods created by the sync after the timeout")
			wantRefused := 1
			if restarted {
				wantRefused = 2 // the released pod's name first: the restart forgot it is taken
			}
			assert.Equal(t, wantRefused, refusedAgain, "creations refused by the sync after the timeout")
			f.checkOnePodPerIndex(t)

			for range 2 {
				e.c.Cache().DeliverAll()
				_, err = e.sync(t, "rel")
				require.NoError(t, err)
			}
			f.checkOnePodPerIndex(t)
			f.checkReleased(t)
			assert.Equal(t, []int32{3, 2, 0}, f.status(t), "active, ready, terminating")
		})
	}
}

// When the read of the pod holding a refused name fails, the sync reports the
// error, and the name is given up only after UncertainCreationTimeout without a
// pod of the Job under it, as before reads were made.
func TestSyncRefusedNameWhenTheReadFails(t *testing.T) {
	f := newReleaseFixtureBy(t, true)
	e := f.e
	failing := &failingGets{PodClient: e.c, fail: true}
	r, err := reconcile.New(e.cfg, failing, reconcile.JobStatusWriter(e.c))
	require.NoError(t, err)
	e.d.Reconciler = r
	e.r = r

	_, err = e.sync(t, "rel")
	require.ErrorContains(t, err, "read pod", "the failed read is reported")
	written, refused := f.creates()
	assert.Empty(t, written, "pods created without knowing who holds the name")
	assert.Equal(t, 1, refused, "creations refused")
	assert.True(t, e.cfg.Expectations.Satisfied("ns/rel"), "expectations: the refused creation is not waited for")

	failing.fail = false
	timeout := e.cfg.UncertainCreationTimeout
	e.c.Clock().Step(timeout)
	e.c.ResetCalls()
	e.c.Cache().DeliverAll()
	_, err = e.sync(t, "rel")
	require.NoError(t, err)
	written, refused = f.creates()
	assert.Len(t, written, 1, "the replacement, once the name is given up")
	assert.Zero(t, refused, "creations refused once the name is given up")
	f.checkOnePodPerIndex(t)
}

// failingGets is a PodClient whose GetPod fails while fail is set.
type failingGets struct {
	reconcile.PodClient
	fail bool
}

func (g *failingGets) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	if g.fail {
		return nil, reconciletest.ServerError()
	}
	return g.PodClient.GetPod(ctx, namespace, name)
}

// deliverAllBut delivers every pending event but the creation of pod name, so that
// the cache shows everything but that pod.
func deliverAllBut(t *testing.T, e *env, name string) {
	t.Helper()
	for {
		i := slices.IndexFunc(e.c.Cache().Pending(), func(ev reconciletest.WatchEvent) bool {
			return ev.Type != watch.Added || ev.Pod == nil || ev.Pod.Name != name
		})
		if i < 0 {
			break
		}
		require.NoError(t, e.c.Cache().DeliverAt(i))
	}
	require.Nil(t, e.c.Cache().Pod(ns, name), "the cache shows pod %s", name)
}

// restart replaces the env's Reconciler by a new one with new stores, keeping the
// Cache as it is (unlike Driver.Restart, which relists).
func restart(t *testing.T, e *env) {
	t.Helper()
	r, err := reconcile.New(reconcile.Config{
		Name:                        testName,
		Clock:                       e.c.Clock(),
		FinalizerRemovalParallelism: 1,
		Backoff:                     e.cfg.Backoff,
	}, e.c, reconcile.JobStatusWriter(e.c))
	require.NoError(t, err)
	e.r, e.d.Reconciler = r, r
}

// Foreign pods (no owner) hold the first names of an index's sequence: one sync
// tries maxNameAttempts names, each refused and read back, and requeues; the next
// plan skips the names found taken, and the sync creates the pod under the first
// free name, once.
func TestSyncSkipsNamesHeldByForeignPods(t *testing.T) {
	e := newEnv(t)
	j := e.create(t, indexedJob("foreign", 1, 1))
	names := []string{indexes.PodName("foreign", string(j.UID), 0, "0")} // no pod of index 0 yet
	for len(names) < 6 {
		names = append(names, indexes.NextPodName("foreign", string(j.UID), 0, names[len(names)-1]))
	}
	for _, n := range names[:5] {
		_, err := e.c.AddPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"app": "someone-else"}}})
		require.NoError(t, err)
	}
	e.c.Cache().DeliverAll()
	e.c.ResetCalls()
	f := &releaseFixture{e: e, job: j}

	res, err := e.sync(t, "foreign")
	require.NoError(t, err)
	assert.NotEmpty(t, res.Retry, "Report.Retry: names are left to try")
	written, refused := f.creates()
	assert.Empty(t, written, "pods created by the first sync")
	assert.Equal(t, 4, refused, "names tried by the first sync")
	assert.True(t, e.cfg.Expectations.Satisfied("ns/foreign"), "expectations: no refused creation is waited for")

	e.c.ResetCalls()
	e.c.Cache().DeliverAll()
	res, err = e.sync(t, "foreign")
	require.NoError(t, err)
	written, refused = f.creates()
	assert.Equal(t, []string{names[5]}, written, "the pod, under the first free name of the sequence")
	assert.Equal(t, 1, refused, "names tried by the second sync: the one the first did not reach")
	assert.Equal(t, 1, res.Created, "Result.Created")
	assert.Len(t, f.livePods(t)[0], 1, "live pods of index 0")
	assert.Equal(t, int32(1), e.apiJob(t, "foreign").Status.Active, "status.active")
}
