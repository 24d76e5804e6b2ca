package reconciletest_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
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
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// otherKind is a custom kind the test clusters do not hold.
var otherKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/worker-tracking"}

// taskRig is a Cluster of Tasks and the Store that holds them.
type taskRig struct {
	*reconciletest.Cluster
	tasks *reconciletest.Store[*reconciletest.Task]
}

func taskCluster() taskRig {
	c, tasks := reconciletest.NewStore(reconciletest.Options{Owner: taskKind, Seed: 7}, reconciletest.TaskType)
	return taskRig{c, tasks}
}

// taskOf and jobOf return the object of a Driver's result, nil when there is
// none or it is of another type.
func taskOf(w *plan.Workload) *reconciletest.Task {
	if w == nil {
		return nil
	}
	t, _ := w.Object.(*reconciletest.Task)
	return t
}

func jobOf(w *plan.Workload) *batchv1.Job {
	if w == nil {
		return nil
	}
	j, _ := w.Object.(*batchv1.Job)
	return j
}

// newReconcilerFor returns a Reconciler of the cluster's owner kind: New for Jobs,
// New with the Cluster as pod client and StatusWriter for Tasks.
func newReconcilerFor(t *testing.T, c *reconciletest.Cluster) *reconcile.Reconciler {
	t.Helper()
	cfg := reconcile.Config{
		Name: managedBy, Clock: c.Clock(), FinalizerRemovalParallelism: 1,
		Backoff: plainbackoff.Policy{Base: time.Second, Max: 2 * time.Second},
	}
	var r *reconcile.Reconciler
	var err error
	if c.Owner() == owner.BatchJob {
		r, err = reconcile.New(cfg, c, reconcile.JobStatusWriter(c))
	} else {
		cfg.Owner = c.Owner()
		r, err = reconcile.New(cfg, c, c)
	}
	require.NoError(t, err)
	return r
}

func managedTask(name string, completions, parallelism int32) *reconciletest.Task {
	task := newTask(ns, name, completions, parallelism)
	task.Spec.ManagedBy = ptr.To(managedBy)
	return task
}

func TestCreateTask(t *testing.T) {
	c := taskCluster()
	in := managedTask("", 3, 2)
	in.GenerateName = "t-"
	task, err := c.tasks.Create(in)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(task.Name, "t-"), "name %q", task.Name)
	assert.Equal(t, metav1.TypeMeta{APIVersion: "test.jobkit.dev/v1", Kind: "Task"}, task.TypeMeta)
	assert.NotEmpty(t, task.UID)
	assert.Equal(t, int64(1), task.Generation)
	assert.Equal(t, ptr.To(batchv1.NonIndexedCompletion), task.Spec.CompletionMode, "API defaults")
	assert.Equal(t, ptr.To[int32](6), task.Spec.BackoffLimit, "API defaults")
	assert.Nil(t, task.Spec.Selector, "no selector is generated for a custom resource")
	assert.Empty(t, task.Spec.Template.Labels, "no template labels")

	_, err = c.tasks.Create(managedTask(task.Name, 1, 1))
	assert.True(t, apierrors.IsAlreadyExists(err), "%v", err)
	_, err = c.tasks.Create(newTask("", "x", 1, 1))
	assert.True(t, apierrors.IsInvalid(err), "%v", err)

	assert.Panics(t, func() {
		reconciletest.NewStore(reconciletest.Options{}, reconciletest.TaskType)
	}, "a cluster of batch/v1 Jobs holds no Tasks")
	assert.Panics(t, func() {
		reconciletest.NewCluster(reconciletest.Options{Owner: owner.Kind{Kind: "Task"}})
	}, "an invalid owner kind")
}

func TestUpdateAndDeleteTask(t *testing.T) {
	c := taskCluster()
	type event struct{ old, new *reconciletest.Task }
	var events []event
	c.tasks.OnEvent(func(ev reconcile.OwnerEvent) { events = append(events, event{taskOf(ev.Old), taskOf(ev.New)}) })
	task, err := c.tasks.Create(managedTask("t", 2, 2))
	require.NoError(t, err)

	up, err := c.tasks.Update(ns, "t", func(x *reconciletest.Task) {
		x.Spec.Parallelism = ptr.To[int32](1)
		x.Status.Succeeded = 5 // ignored: not the status subresource
	})
	require.NoError(t, err)
	assert.Equal(t, int64(2), up.Generation, "a spec change bumps the generation")
	assert.Zero(t, up.Status.Succeeded)
	assert.NotEqual(t, task.ResourceVersion, up.ResourceVersion)
	same, err := c.tasks.Update(ns, "t", func(*reconciletest.Task) {})
	require.NoError(t, err)
	assert.Equal(t, up.ResourceVersion, same.ResourceVersion, "a no-op update writes nothing")

	require.NoError(t, c.tasks.Delete(ns, "t"))
	assert.True(t, apierrors.IsNotFound(c.tasks.Delete(ns, "t")))
	_, err = c.tasks.Get(ns, "t")
	assert.True(t, apierrors.IsNotFound(err))
	_, err = c.tasks.Update(ns, "t", func(*reconciletest.Task) {})
	assert.True(t, apierrors.IsNotFound(err))

	assert.Equal(t, 3, c.Cache().DeliverAll())
	require.Len(t, events, 3)
	assert.Nil(t, events[0].old, "an addition")
	assert.Equal(t, task.ResourceVersion, events[0].new.ResourceVersion)
	assert.Equal(t, task.ResourceVersion, events[1].old.ResourceVersion)
	assert.Equal(t, up.ResourceVersion, events[1].new.ResourceVersion)
	assert.Nil(t, events[2].new, "a deletion")
	assert.Equal(t, ns+"/t", events[2].old.Namespace+"/"+events[2].old.Name)
	assert.Nil(t, c.tasks.Cached(ns, "t"), "the cache saw the deletion")
}

func TestTaskWriteStatus(t *testing.T) {
	c := taskCluster()
	task, err := c.tasks.Create(managedTask("t", 2, 2))
	require.NoError(t, err)
	tests := []struct {
		name     string
		mutate   func(*reconciletest.Task)
		wantErr  func(error) bool
		wantKept bool
	}{
		{name: "stale resourceVersion", mutate: func(x *reconciletest.Task) { x.ResourceVersion = "999"; x.Status.Active = 1 }, wantErr: apierrors.IsConflict},
		{name: "another UID", mutate: func(x *reconciletest.Task) { x.UID = "other"; x.Status.Active = 1 }, wantErr: apierrors.IsConflict},
		{name: "invalid status", mutate: func(x *reconciletest.Task) { x.Status.Succeeded = -1 }, wantErr: apierrors.IsInvalid},
		{name: "valid status", mutate: func(x *reconciletest.Task) { x.Status.Active = 2 }, wantKept: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := task.DeepCopy()
			tc.mutate(in)
			w := in.Workload()
			out, err := c.tasks.WriteStatus(t.Context(), w, in.Status)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "WriteStatus: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, in.Status, out.Status)
			assert.NotEqual(t, task.ResourceVersion, out.ResourceVersion)
		})
	}
	calls := c.Calls()
	require.Len(t, calls, len(tests))
	for _, call := range calls {
		assert.Equal(t, reconciletest.OpUpdateStatus, call.Op)
		assert.Equal(t, ns+"/t", call.Namespace+"/"+call.Name)
		assert.NotNil(t, call.Job, "the status written, in Job terms")
	}
}

func TestWriteStatus(t *testing.T) {
	c := taskCluster()
	task, err := c.tasks.Create(managedTask("t", 2, 2))
	require.NoError(t, err)
	job, err := c.Jobs().Create(managedJob("j", 2, 2))
	require.NoError(t, err)
	status := batchv1.JobStatus{Active: 2}
	tests := []struct {
		name       string
		w          *plan.Workload
		wantErr    func(error) bool
		wantObject any
	}{
		{name: "Task", w: task.Workload(), wantObject: &reconciletest.Task{}},
		{name: "Job", w: plan.JobWorkload(job), wantObject: &batchv1.Job{}},
		{name: "stale Task", w: func() *plan.Workload { w := task.Workload(); w.ResourceVersion = "999"; return w }(), wantErr: apierrors.IsConflict},
		{name: "unknown object", w: &plan.Workload{Object: &corev1.Pod{}}, wantErr: apierrors.IsBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := c.WriteStatus(t.Context(), tc.w, status)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "WriteStatus: %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, status, out.Status)
			assert.IsType(t, tc.wantObject, out.Object)
			assert.NotEqual(t, tc.w.ResourceVersion, out.ResourceVersion, "the stored version")
		})
	}
}

// The garbage collector follows controller references to the kinds the cluster
// holds (Jobs and its Tasks) by UID, and leaves pods of other kinds alone.
func TestCollectGarbageFollowsOwnerKind(t *testing.T) {
	c := taskCluster()
	task, err := c.tasks.Create(managedTask("t", 1, 1))
	require.NoError(t, err)
	job, err := c.Jobs().Create(managedJob("j", 1, 1))
	require.NoError(t, err)
	ownedBy := func(name string, ref metav1.OwnerReference) {
		p := newPod(name)
		p.OwnerReferences = []metav1.OwnerReference{ref}
		_, err := c.AddPod(p)
		require.NoError(t, err)
	}
	ownedBy("of-task", taskKind.NewControllerRef(task))
	ownedBy("of-job", owner.BatchJob.NewControllerRef(job))
	ownedBy("of-other-kind", otherKind.NewControllerRef(&metav1.ObjectMeta{Name: "gone", UID: "never-existed"}))
	ownedBy("of-task-kind-other-uid", taskKind.NewControllerRef(&metav1.ObjectMeta{Name: "t", UID: "old-uid"}))

	left := func() []string {
		var names []string
		for _, p := range c.ListPods(ns) {
			names = append(names, p.Name)
		}
		return names
	}
	assert.Equal(t, 1, c.CollectGarbage(), "only the pod of a Task that no longer exists (by UID)")
	assert.Equal(t, []string{"of-task", "of-job", "of-other-kind"}, left())

	require.NoError(t, c.tasks.Delete(ns, "t"))
	assert.Equal(t, 1, c.CollectGarbage())
	assert.Equal(t, []string{"of-job", "of-other-kind"}, left(), "the Job's pod and the other kind's stay")

	require.NoError(t, c.Jobs().Delete(ns, "j"))
	assert.Equal(t, 1, c.CollectGarbage())
	assert.Equal(t, []string{"of-other-kind"}, left(), "a kind the cluster does not know is never collected")
}

// runOwner runs one scenario against a cluster of Jobs or of Tasks: an Indexed owner
// of 6 completions, 3 at a time, whose first two pods fail, through a create timeout
// whose write happened, a status conflict, a failed finalizer removal, event latency,
// a lost event and a controller restart. It returns the final status, the call log
// (one line per call, with the status write named alike for both kinds) and the
// stored pods.
func runOwner(t *testing.T, c taskRig) (batchv1.JobStatus, []string, []*corev1.Pod) {
	t.Helper()
	d := reconciletest.NewDriver(c.Cluster, newReconcilerFor(t, c.Cluster))
	statusOp := reconciletest.OpUpdateJobStatus
	if c.Owner() == owner.BatchJob {
		j := managedJob("train", 6, 3)
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		_, err := c.Jobs().Create(j)
		require.NoError(t, err)
	} else {
		statusOp = reconciletest.OpUpdateStatus
		task := managedTask("train", 6, 3)
		task.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		_, err := c.tasks.Create(task)
		require.NoError(t, err)
	}
	c.Kubelet().SetScript(reconciletest.FailFirst(2, 3))
	c.InjectFault(reconciletest.Fault{Op: reconciletest.OpCreatePod, After: 1, Err: reconciletest.TimeoutError(), AfterWrite: true})
	c.InjectFault(reconciletest.Fault{Op: statusOp, After: 2, Err: apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("stale"))})
	c.InjectFault(reconciletest.Fault{Op: reconciletest.OpPatchPod, Err: reconciletest.ServerError()})
	c.SetEventLatency(3 * time.Second)

	ctx := t.Context()
	for range 4 {
		_, err := d.Step(ctx, ns, "train")
		require.NoError(t, err)
	}
	// A lost event: the first pod event still queued reaches the cache silently.
	i := slices.IndexFunc(c.Cache().Pending(), func(ev reconciletest.WatchEvent) bool { return ev.Pod != nil })
	require.GreaterOrEqual(t, i, 0, "a pod event is still queued (event latency)")
	require.NoError(t, c.Cache().DropAt(i))
	for range 3 {
		_, err := d.Step(ctx, ns, "train")
		require.NoError(t, err)
	}
	d.Restart(newReconcilerFor(t, c.Cluster))
	rr, err := d.Run(ctx, ns, "train", 300)
	require.NoError(t, err, "run: %+v", rr)

	var st batchv1.JobStatus
	if taskOf(rr.Workload) != nil {
		st = taskOf(rr.Workload).Status
	} else {
		st = rr.Workload.Status
	}
	var calls []string
	var timeouts, conflicts, serverErrors int
	for _, call := range c.Calls() {
		if call.Op == statusOp {
			call.Op = "UpdateStatus"
		}
		switch {
		case apierrors.IsTimeout(call.Err) && call.Written:
			timeouts++
		case apierrors.IsConflict(call.Err) && call.Op == "UpdateStatus":
			conflicts++
		case apierrors.IsInternalError(call.Err) && call.Op == reconciletest.OpPatchPod:
			serverErrors++
		}
		calls = append(calls, call.String())
	}
	assert.Equal(t, []int{1, 1, 1}, []int{timeouts, conflicts, serverErrors}, "the faults fired: create timeout after the write, status conflict, patch error")
	return st, calls, c.ListPods(ns)
}

// A Task, a custom owner with its own finalizer, runs to completion through faults,
// event latency, a lost event and a controller restart, with exact counts, pods
// that carry its controller reference and finalizer only, no finalizer left, and
// the very calls a batch/v1 Job makes in the same scenario.
func TestDriverRunsTask(t *testing.T) {
	st, calls, pods := runOwner(t, taskCluster())
	assert.True(t, jobstatus.IsConditionTrue(st.Conditions, batchv1.JobComplete), "Complete: %+v", st)
	assert.Equal(t, int32(6), st.Succeeded, "succeeded")
	assert.Equal(t, int32(2), st.Failed, "failed")
	assert.Equal(t, "0-5", st.CompletedIndexes)
	require.Len(t, pods, 8, "6 successes and 2 failures: no pod created twice")
	succeeded := map[string]int{}
	for _, p := range pods {
		ref := taskKind.ControllerOf(p)
		require.NotNil(t, ref, "pod %s: controller %v", p.Name, p.OwnerReferences)
		assert.Equal(t, "train", ref.Name)
		assert.Nil(t, owner.BatchJob.ControllerOf(p), "pod %s", p.Name)
		assert.Empty(t, p.Finalizers, "pod %s keeps a finalizer", p.Name)
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded[p.Annotations[batchv1.JobCompletionIndexAnnotation]]++
		}
	}
	assert.Equal(t, map[string]int{"0": 1, "1": 1, "2": 1, "3": 1, "4": 1, "5": 1}, succeeded, "one success per index")

	jobSt, jobCalls, _ := runOwner(t, taskRig{Cluster: reconciletest.NewCluster(reconciletest.Options{Seed: 7})})
	if diff := cmp.Diff(jobSt, st); diff != "" {
		t.Errorf("status of a Task and of a Job in the same scenario (-job +task):\n%s", diff)
	}
	assert.Equal(t, jobCalls, calls, "the calls of a Task and of a Job in the same scenario")
}

// The tracking finalizer of a Task's pods is the Task kind's: pods created for a
// Task carry it, and only it.
func TestTaskPodsCarryTheKindsFinalizer(t *testing.T) {
	c := taskCluster()
	d := reconciletest.NewDriver(c.Cluster, newReconcilerFor(t, c.Cluster))
	_, err := c.tasks.Create(managedTask("t", 2, 2))
	require.NoError(t, err)
	sr, err := d.Step(t.Context(), ns, "t")
	require.NoError(t, err)
	require.NoError(t, sr.Err)
	require.NotNil(t, taskOf(sr.Workload))
	assert.Nil(t, jobOf(sr.Workload))
	pods := c.ListPods(ns)
	require.Len(t, pods, 2)
	for _, p := range pods {
		assert.Equal(t, []string{taskKind.Finalizer}, p.Finalizers, "pod %s", p.Name)
	}
}

// Deleting a Task while its pods run: the garbage collector deletes its pods, the
// kubelet stops them, and the orphan cleanup (CleanOrphan through
// Driver.CleanOrphans) removes the Task kind's finalizer, so no pod is left with
// it; the pods of a live Task keep theirs.
func TestDeleteTaskWhilePodsRun(t *testing.T) {
	c := taskCluster()
	d := reconciletest.NewDriver(c.Cluster, newReconcilerFor(t, c.Cluster))
	ctx := t.Context()
	for _, name := range []string{"doomed", "live"} {
		_, err := c.tasks.Create(managedTask(name, 3, 3))
		require.NoError(t, err)
	}
	c.Kubelet().SetScript(func(k *reconciletest.Kubelet, p *corev1.Pod) error {
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil {
			return k.Run(p.Namespace, p.Name)
		}
		return nil
	})
	for range 2 {
		for _, name := range []string{"doomed", "live"} {
			_, err := d.Step(ctx, ns, name)
			require.NoError(t, err)
		}
	}
	countTracked := func() map[string]int {
		out := map[string]int{}
		for _, p := range c.ListPods(ns) {
			if taskKind.HasFinalizer(p) {
				out[taskKind.ControllerOf(p).Name]++
			}
		}
		return out
	}
	require.Equal(t, map[string]int{"doomed": 3, "live": 3}, countTracked(), "every pod runs with the finalizer")

	require.NoError(t, c.tasks.Delete(ns, "doomed"))
	assert.Equal(t, 3, c.CollectGarbage())
	c.Cache().DeliverAll()
	require.NoError(t, c.Kubelet().Step(), "the kubelet stops the deleted pods")
	c.Cache().DeliverAll()
	removed, err := d.CleanOrphans(ctx)
	require.NoError(t, err)
	assert.Equal(t, 3, removed)
	assert.Equal(t, map[string]int{"live": 3}, countTracked(), "no pod of the deleted Task keeps the finalizer")
	for _, p := range c.ListPods(ns) {
		assert.Equal(t, "live", taskKind.ControllerOf(p).Name, "pod %s of the deleted Task is gone", p.Name)
	}
	synced, _, err := d.Sync(ctx, ns, "doomed")
	assert.False(t, synced, "a deleted Task is not synced")
	assert.NoError(t, err)
}

// SyncFunc and DoneFunc let a test drive a controller that is not a plain
// Reconciler: here one that converts the Task itself.
func TestDriverSyncFuncAndDoneFunc(t *testing.T) {
	c := taskCluster()
	r := newReconcilerFor(t, c.Cluster)
	d := reconciletest.NewDriver(c.Cluster, r)
	syncs := 0
	d.SyncFunc = func(ctx context.Context, namespace, name string) (bool, reconcile.Result, error) {
		syncs++
		task := c.tasks.Cached(namespace, name)
		if task == nil {
			return false, reconcile.Result{}, nil
		}
		res, err := r.Sync(ctx, task.Workload(), c.Cache().OwnerPods)
		return true, res, err
	}
	d.DoneFunc = func(namespace, name string) (bool, bool) {
		task, err := c.tasks.Get(namespace, name)
		if err != nil {
			return false, false
		}
		return task.Status.Succeeded == 2, true
	}
	_, err := c.tasks.Create(managedTask("t", 2, 2))
	require.NoError(t, err)
	c.Kubelet().SetScript(reconciletest.SucceedPods())
	rr, err := d.Run(t.Context(), ns, "t", 50)
	require.NoError(t, err)
	assert.Equal(t, rr.Steps, syncs, "one sync per step, through SyncFunc")
	assert.Equal(t, int32(2), taskOf(rr.Workload).Status.Succeeded)

	d.DoneFunc = func(string, string) (bool, bool) { return false, false }
	_, err = d.Run(t.Context(), ns, "t", 5)
	assert.ErrorContains(t, err, "no longer exists")
}

func TestCachePodsFor(t *testing.T) {
	c := taskCluster()
	task, err := c.tasks.Create(managedTask("t", 1, 1))
	require.NoError(t, err)
	add := func(name string, labels map[string]string, refs ...metav1.OwnerReference) {
		p := newPod(name)
		p.Labels, p.OwnerReferences = labels, refs
		_, err := c.AddPod(p)
		require.NoError(t, err)
	}
	add("mine", nil, taskKind.NewControllerRef(task))
	add("orphan", map[string]string{"app": "t"})
	add("other", map[string]string{"app": "t"}, otherKind.NewControllerRef(&metav1.ObjectMeta{Name: "o", UID: types.UID("o")}))
	c.Cache().DeliverAll()
	names := func(w *plan.Workload) []string {
		pods, err := c.Cache().OwnerPods(w)
		require.NoError(t, err)
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}
	w := c.tasks.Cached(ns, "t").Workload()
	assert.Equal(t, []string{"mine"}, names(w), "without a selector, only controlled pods")
	task.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "t"}}
	assert.Equal(t, []string{"mine", "orphan"}, names(task.Workload()), "with a selector, matching orphans too")
}

// Reset lists Tasks as a new informer would, after the Jobs and before the pods.
func TestCacheResetListsTasks(t *testing.T) {
	c := taskCluster()
	for i := range 2 {
		_, err := c.tasks.Create(managedTask("t"+strconv.Itoa(i), 1, 1))
		require.NoError(t, err)
	}
	_, err := c.Jobs().Create(managedJob("j", 1, 1))
	require.NoError(t, err)
	c.Cache().Reset()
	var got []string
	for _, ev := range c.Cache().Pending() {
		got = append(got, ev.String())
	}
	assert.Equal(t, []string{"ADDED job ns/j rv=3", "ADDED task ns/t0 rv=1", "ADDED task ns/t1 rv=2"}, got)
	c.Cache().DeliverAll()
	assert.Len(t, c.tasks.CachedList(), 2)
	assert.NotNil(t, c.tasks.CachedOwner(ns, "t0"))
	assert.Nil(t, c.tasks.CachedOwner(ns, "missing"))
}

// Events keep their order per object, and a Task and a Job of the same name are two
// objects: delivering the Job's event does not drag the Task's along.
func TestCacheOrdersTaskEventsPerObject(t *testing.T) {
	c := taskCluster()
	_, err := c.tasks.Create(managedTask("x", 1, 1))
	require.NoError(t, err)
	_, err = c.tasks.Update(ns, "x", func(x *reconciletest.Task) { x.Spec.Parallelism = ptr.To[int32](0) })
	require.NoError(t, err)
	_, err = c.Jobs().Create(managedJob("x", 1, 1))
	require.NoError(t, err)
	require.Len(t, c.Cache().Pending(), 3)

	require.NoError(t, c.Cache().DeliverAt(2))
	assert.NotNil(t, c.Jobs().Cached(ns, "x"))
	assert.Nil(t, c.tasks.Cached(ns, "x"), "the Task's events wait")
	require.NoError(t, c.Cache().DeliverAt(1), "the Task's update, after its creation")
	assert.Equal(t, ptr.To[int32](0), c.tasks.Cached(ns, "x").Spec.Parallelism)
	assert.Empty(t, c.Cache().Pending())
}

func TestDriverTaskStepLimit(t *testing.T) {
	c := taskCluster()
	d := reconciletest.NewDriver(c.Cluster, newReconcilerFor(t, c.Cluster))
	_, err := c.tasks.Create(managedTask("t", 1, 1))
	require.NoError(t, err)
	rr, err := d.Run(t.Context(), ns, "t", 3) // no kubelet script: the pod never runs
	require.ErrorIs(t, err, reconciletest.ErrStepLimit)
	assert.Equal(t, 3, rr.Steps)
	assert.Contains(t, err.Error(), "Task status")
	assert.Contains(t, err.Error(), "Pending")

	_, err = d.Run(t.Context(), ns, "missing", 5)
	assert.ErrorContains(t, err, "Task.test.jobkit.dev ns/missing no longer exists")
}

// A Task with no managedBy is any controller's of its kind, in the Cache's facts
// as in production (plan.Workload.OrphanOwner); one with managedBy names it.
func TestTaskOwnerManagedBy(t *testing.T) {
	kind := owner.Kind{Group: "test.jobkit.dev", Version: "v1", Kind: "Task", Finalizer: "test.jobkit.dev/tracking"}
	tests := []struct {
		name      string
		managedBy *string
		want      string
	}{
		{name: "unset: any controller of the kind", want: ""},
		{name: "set", managedBy: ptr.To("example.com/mine"), want: "example.com/mine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, tasks := reconciletest.NewStore(reconciletest.Options{Owner: kind}, reconciletest.TaskType)
			job := reconciletest.NewJob("ns", "t", 1, 1)
			task := &reconciletest.Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec}
			task.Spec.ManagedBy = tc.managedBy
			if _, err := tasks.Create(task); err != nil {
				t.Fatal(err)
			}
			c.Cache().DeliverAll()
			got := tasks.CachedOwner("ns", "t")
			if got == nil || got.ManagedBy != tc.want {
				t.Fatalf("CachedOwner = %+v, want ManagedBy %q", got, tc.want)
			}
			stored, err := tasks.Get("ns", "t")
			if err != nil {
				t.Fatal(err)
			}
			if want := stored.Workload().OrphanOwner(kind); got.ManagedBy != want.ManagedBy || got.UID != want.UID || got.Finished != want.Finished {
				t.Errorf("CachedOwner = %+v, production's facts %+v", got, want)
			}
		})
	}
}
