package reconciletest_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

const ns = "ns"

// start is the time of the clock of a Cluster created without one.
var start = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

func newPod(name string, finalizers ...string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Finalizers: finalizers},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main"}}},
	}
	if name == "" {
		p.GenerateName = "gen-"
	}
	return p
}

func TestGeneratedNamesAreSeeded(t *testing.T) {
	names := func(seed uint64) []string {
		c := reconciletest.NewCluster(reconciletest.Options{Seed: seed})
		var out []string
		for range 3 {
			p, err := c.CreatePod(t.Context(), newPod(""))
			require.NoError(t, err)
			out = append(out, p.Name)
		}
		return out
	}
	assert.Equal(t, names(1), names(1), "same seed, same names")
	assert.NotEqual(t, names(1), names(2), "another seed, other names")
	for _, n := range names(3) {
		assert.True(t, strings.HasPrefix(n, "gen-") && len(n) == len("gen-")+5, "name %q", n)
	}
}

func TestCreatePod(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	c.Clock().Step(1500 * time.Millisecond)
	in := newPod("a")
	in.Status.Phase = corev1.PodRunning // ignored: a new pod is Pending
	p, err := c.CreatePod(t.Context(), in)
	require.NoError(t, err)
	assert.Equal(t, corev1.PodPending, p.Status.Phase)
	assert.NotEmpty(t, p.UID)
	assert.Equal(t, start.Add(time.Second), p.CreationTimestamp.Time, "whole seconds, as the API stores them")
	assert.Equal(t, corev1.PodRunning, in.Status.Phase, "the input is not modified")

	_, err = c.CreatePod(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	assert.True(t, apierrors.IsInvalid(err), "no namespace: %v", err)
	_, err = c.CreatePod(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns}})
	assert.True(t, apierrors.IsInvalid(err), "no name: %v", err)
	_, err = c.CreatePod(t.Context(), nil)
	assert.True(t, apierrors.IsBadRequest(err))
}

func TestGracefulDeletion(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []string
		run        bool
		finish     bool
		wantGone   bool
	}{
		{name: "never ran, no finalizer: gone at once", wantGone: true},
		{name: "never ran, finalizer: stays until removed", finalizers: []string{finalizers.Name}},
		{name: "running: stays until the kubelet finishes", run: true},
		{name: "finished: gone at once", run: true, finish: true, wantGone: true},
		{name: "finished with finalizer: stays", run: true, finish: true, finalizers: []string{finalizers.Name}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := reconciletest.NewCluster(reconciletest.Options{})
			p, err := c.CreatePod(t.Context(), newPod("p", tc.finalizers...))
			require.NoError(t, err)
			if tc.run {
				require.NoError(t, c.Kubelet().Run(ns, "p"))
			}
			if tc.finish {
				require.NoError(t, c.Kubelet().Succeed(ns, "p"))
			}
			require.NoError(t, c.DeletePod(t.Context(), ns, "p", p.UID))
			got, err := c.GetPod(t.Context(), ns, "p")
			if tc.wantGone {
				assert.True(t, apierrors.IsNotFound(err), "GetPod error = %v, want NotFound", err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got.DeletionTimestamp)
			if tc.run && !tc.finish {
				assert.Equal(t, start.Add(30*time.Second), got.DeletionTimestamp.Time, "now + the default grace period")
				require.NoError(t, c.DeletePod(t.Context(), ns, "p", p.UID), "deleting again is accepted")
				require.NoError(t, c.Kubelet().Step())
				got, err = c.GetPod(t.Context(), ns, "p")
				if len(tc.finalizers) == 0 {
					assert.True(t, apierrors.IsNotFound(err), "gone once the kubelet finished: %v", err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, corev1.PodFailed, got.Status.Phase, "killed")
			}
			_, err = c.PatchPod(t.Context(), ns, "p", types.StrategicMergePatchType, finalizers.RemovalPatch(got, finalizers.Name).Data)
			require.NoError(t, err)
			_, err = c.GetPod(t.Context(), ns, "p")
			assert.True(t, apierrors.IsNotFound(err), "gone once the finalizer is removed: %v", err)
		})
	}
}

func TestHonourGracePeriod(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	in := newPod("p")
	in.Spec.TerminationGracePeriodSeconds = ptr.To[int64](10)
	_, err := c.CreatePod(t.Context(), in)
	require.NoError(t, err)
	require.NoError(t, c.Kubelet().Run(ns, "p"))
	c.Kubelet().HonourGracePeriod(true)
	require.NoError(t, c.RemovePod(ns, "p", nil))
	require.NoError(t, c.Kubelet().Step())
	_, err = c.GetPod(t.Context(), ns, "p")
	require.NoError(t, err, "still terminating within its grace period")
	c.Clock().Step(10 * time.Second)
	require.NoError(t, c.Kubelet().Step())
	_, err = c.GetPod(t.Context(), ns, "p")
	assert.True(t, apierrors.IsNotFound(err))
}

func TestPatchPod(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	p, err := c.CreatePod(t.Context(), newPod("p", "example.com/a"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		pt      types.PatchType
		patch   string
		wantErr func(error) bool
	}{
		{name: "not strategic merge", pt: types.MergePatchType, patch: `{}`, wantErr: apierrors.IsUnsupportedMediaType},
		{name: "bad json", pt: types.StrategicMergePatchType, patch: `{`, wantErr: apierrors.IsBadRequest},
		{name: "rename", pt: types.StrategicMergePatchType, patch: `{"metadata":{"name":"q"}}`, wantErr: apierrors.IsInvalid},
		{name: "stale resourceVersion", pt: types.StrategicMergePatchType, patch: `{"metadata":{"resourceVersion":"0"}}`, wantErr: apierrors.IsConflict},
		{name: "stale UID", pt: types.StrategicMergePatchType, patch: `{"metadata":{"uid":"x"}}`, wantErr: reconcile.IsPodGone},
		{name: "labels", pt: types.StrategicMergePatchType, patch: `{"metadata":{"labels":{"k":"v"}}}`},
		{name: "status is ignored", pt: types.StrategicMergePatchType, patch: `{"status":{"phase":"Running"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.PatchPod(t.Context(), ns, "p", tc.pt, []byte(tc.patch))
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "PatchPod(%s) error = %v", tc.patch, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, corev1.PodPending, got.Status.Phase)
			assert.Equal(t, p.UID, got.UID)
		})
	}
	before, _ := c.GetPod(t.Context(), ns, "p")
	_, err = c.PatchPod(t.Context(), ns, "p", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"k":"v"}}}`))
	require.NoError(t, err)
	after, _ := c.GetPod(t.Context(), ns, "p")
	assert.Equal(t, before.ResourceVersion, after.ResourceVersion, "a no-op patch writes nothing")

	require.NoError(t, c.RemovePod(ns, "p", nil)) // finalizer a keeps it
	_, err = c.PatchPod(t.Context(), ns, "p", types.StrategicMergePatchType, []byte(`{"metadata":{"finalizers":["example.com/b"]}}`))
	assert.True(t, apierrors.IsInvalid(err), "no new finalizer on a pod being deleted: %v", err)
}

func TestUpdateJobStatusValidates(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	j, err := c.Jobs().Create(reconciletest.NewJob(ns, "j", 1, 1))
	require.NoError(t, err)
	bad := j.DeepCopy()
	bad.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	_, err = c.UpdateJobStatus(t.Context(), bad)
	require.True(t, apierrors.IsInvalid(err), "Complete without SuccessCriteriaMet: %v", err)
	assert.Contains(t, err.Error(), "SuccessCriteriaMet")

	other := j.DeepCopy()
	other.UID = "other"
	_, err = c.UpdateJobStatus(t.Context(), other)
	assert.True(t, apierrors.IsConflict(err), "UID precondition: %v", err)

	same, err := c.UpdateJobStatus(t.Context(), j)
	require.NoError(t, err)
	assert.Equal(t, j.ResourceVersion, same.ResourceVersion, "an unchanged status writes nothing")

	unconditional := j.DeepCopy()
	unconditional.ResourceVersion = ""
	unconditional.Status.StartTime = ptr.To(metav1.NewTime(start))
	unconditional.Spec.Parallelism = ptr.To[int32](9) // the status subresource ignores the spec
	got, err := c.UpdateJobStatus(t.Context(), unconditional)
	require.NoError(t, err)
	assert.Equal(t, int32(1), *got.Spec.Parallelism)
	assert.NotNil(t, got.Status.StartTime)
}

func TestCreateJobDefaults(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	in := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "j-"}}
	in.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	in.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
	}}}
	j, err := c.Jobs().Create(in)
	require.NoError(t, err)
	s := j.Spec
	assert.Equal(t, int32(1), *s.Completions)
	assert.Equal(t, int32(1), *s.Parallelism)
	assert.Equal(t, int32(2147483647), *s.BackoffLimit)
	assert.Equal(t, batchv1.NonIndexedCompletion, *s.CompletionMode)
	assert.Equal(t, batchv1.Failed, *s.PodReplacementPolicy)
	assert.False(t, *s.Suspend)
	assert.Equal(t, corev1.ConditionTrue, s.PodFailurePolicy.Rules[0].OnPodConditions[0].Status)
	assert.Equal(t, string(j.UID), s.Selector.MatchLabels["batch.kubernetes.io/controller-uid"])
	assert.Equal(t, j.Name, s.Template.Labels["batch.kubernetes.io/job-name"])
	assert.True(t, strings.HasPrefix(j.Name, "j-"))

	_, err = c.Jobs().Create(j)
	assert.True(t, apierrors.IsAlreadyExists(err))
	_, err = c.Jobs().Create(&batchv1.Job{})
	assert.True(t, apierrors.IsInvalid(err))
}

func TestUpdateAndDeleteJob(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	j, err := c.Jobs().Create(reconciletest.NewJob(ns, "j", 1, 1))
	require.NoError(t, err)
	got, err := c.Jobs().Update(ns, "j", func(j *batchv1.Job) { j.Labels = map[string]string{"a": "b"} })
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Generation, "metadata changes keep the generation")
	got, err = c.Jobs().Update(ns, "j", func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true); j.Status.Active = 5 })
	require.NoError(t, err)
	assert.Equal(t, int64(2), got.Generation, "spec changes bump the generation")
	assert.Zero(t, got.Status.Active, "status changes are ignored")
	same, err := c.Jobs().Update(ns, "j", func(*batchv1.Job) {})
	require.NoError(t, err)
	assert.Equal(t, got.ResourceVersion, same.ResourceVersion)

	pod := newPod("owned")
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))}
	_, err = c.AddPod(pod)
	require.NoError(t, err)
	_, err = c.AddPod(newPod("free"))
	require.NoError(t, err)
	require.NoError(t, c.Jobs().Delete(ns, "j"))
	assert.True(t, apierrors.IsNotFound(c.Jobs().Delete(ns, "j")))
	_, err = c.Jobs().Update(ns, "j", func(*batchv1.Job) {})
	assert.True(t, apierrors.IsNotFound(err))
	assert.Len(t, c.ListPods(ns), 2, "no garbage collector")
	assert.Equal(t, 1, c.CollectGarbage())
	assert.Len(t, c.ListPods(ns), 1)
	assert.Len(t, c.Jobs().List(), 0)
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		fault     reconciletest.Fault
		wantFails []bool // outcome of 4 CreatePod calls
	}{
		{name: "default: the first call", fault: reconciletest.Fault{Op: reconciletest.OpCreatePod}, wantFails: []bool{true, false, false, false}},
		{name: "After 2: the third call", fault: reconciletest.Fault{After: 2}, wantFails: []bool{false, false, true, false}},
		{name: "Times 2", fault: reconciletest.Fault{Times: 2}, wantFails: []bool{true, true, false, false}},
		{name: "Times -1: every call", fault: reconciletest.Fault{After: 1, Times: -1}, wantFails: []bool{false, true, true, true}},
		{name: "other operation: never", fault: reconciletest.Fault{Op: reconciletest.OpDeletePod}, wantFails: []bool{false, false, false, false}},
		{name: "Match", fault: reconciletest.Fault{Match: func(c reconciletest.Call) bool { return c.GenerateName == "odd-" }}, wantFails: []bool{false, true, false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := reconciletest.NewCluster(reconciletest.Options{})
			c.InjectFault(tc.fault)
			var got []bool
			for i := range 4 {
				p := newPod("")
				if i%2 == 1 {
					p.GenerateName = "odd-"
				}
				_, err := c.CreatePod(t.Context(), p)
				got = append(got, err != nil)
				if err != nil {
					assert.True(t, apierrors.IsInternalError(err), "default fault error: %v", err)
				}
			}
			assert.Equal(t, tc.wantFails, got)
			failed := 0
			for _, f := range tc.wantFails {
				if f {
					failed++
				}
			}
			assert.Len(t, c.ListPods(ns), 4-failed, "a failed call writes nothing")
		})
	}
}

func TestFaultAfterWrite(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	c.InjectFault(reconciletest.Fault{Err: reconciletest.TimeoutError(), AfterWrite: true})
	_, err := c.CreatePod(t.Context(), newPod("p"))
	require.Error(t, err)
	assert.True(t, apierrors.IsTimeout(err))
	_, err = c.GetPod(t.Context(), ns, "p")
	require.NoError(t, err, "the write happened")
	calls := c.Calls()
	require.Len(t, calls, 1)
	assert.True(t, calls[0].Written)
	assert.Error(t, calls[0].Err)
	assert.Contains(t, calls[0].String(), "CreatePod ns/p err=")
}

func TestInterceptor(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	n := 0
	c.SetInterceptor(func(call reconciletest.Call) reconciletest.Outcome {
		n++
		if call.Op == reconciletest.OpDeletePod {
			return reconciletest.Outcome{Err: apierrors.NewTooManyRequests("simulated throttling", 1)}
		}
		return reconciletest.Outcome{}
	})
	p, err := c.CreatePod(t.Context(), newPod("p"))
	require.NoError(t, err)
	err = c.DeletePod(t.Context(), ns, "p", p.UID)
	assert.True(t, apierrors.IsTooManyRequests(err))
	c.FailNth(reconciletest.OpDeletePod, 1, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("stale")))
	err = c.DeletePod(t.Context(), ns, "p", p.UID)
	assert.True(t, apierrors.IsConflict(err), "faults come before the interceptor: %v", err)
	assert.Equal(t, 2, n, "the interceptor is not asked when a fault decided")
	c.ClearFaults()
	require.NoError(t, c.DeletePod(t.Context(), ns, "p", p.UID))
	c.ResetCalls()
	assert.Empty(t, c.Calls())
}

// An Outcome's Delay is the call's latency: concurrent calls overlap, the write
// happens at the end, the clock moves with the wait, and a fault of the same
// Outcome applies at the end too.
func TestInterceptorDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := reconciletest.NewCluster(reconciletest.Options{Clock: clocktesting.NewFakeClock(start)})
		const L = 5 * time.Second
		c.SetInterceptor(func(call reconciletest.Call) reconciletest.Outcome {
			if call.Name == "late" {
				return reconciletest.Outcome{Delay: L, Err: reconciletest.TimeoutError(), AfterWrite: true}
			}
			return reconciletest.Outcome{Delay: L}
		})
		var wg sync.WaitGroup
		for _, name := range []string{"a", "b", "late"} {
			wg.Go(func() { _, _ = c.CreatePod(t.Context(), newPod(name)) })
		}
		synctest.Wait()
		assert.Empty(t, c.ListPods(ns), "nothing is written before the latency has passed")
		wg.Wait()
		assert.Equal(t, L, time.Since(start), "three concurrent calls take one latency")
		assert.Equal(t, start.Add(L), c.Clock().Now(), "the clock moved with the wait")
		pods := c.ListPods(ns)
		require.Len(t, pods, 3, "the timed-out call wrote too")
		for _, p := range pods {
			assert.Equal(t, start.Add(L).Unix(), p.CreationTimestamp.Unix(), "pod %s written at the end of the call", p.Name)
		}
		for _, call := range c.Calls() {
			assert.Equal(t, start.Add(L), call.Time, "call %v", call)
		}
	})
}

func TestNamespaceTerminatingError(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	c.TerminateNamespace(ns)
	_, err := c.CreatePod(t.Context(), newPod("p"))
	assert.True(t, apierrors.IsForbidden(err))
	assert.True(t, apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause))
	_, err = c.CreatePod(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "p"}})
	assert.NoError(t, err)
}

func TestCacheDelivery(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	var seen []string
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		p := ev.New
		if p == nil {
			p = ev.Old
		}
		seen = append(seen, ev.Type.String()+" "+p.Name)
	})
	a, err := c.CreatePod(t.Context(), newPod("a"))
	require.NoError(t, err)
	_, err = c.CreatePod(t.Context(), newPod("b"))
	require.NoError(t, err)
	require.NoError(t, c.Kubelet().Run(ns, "a"))
	require.NoError(t, c.DeletePod(t.Context(), ns, "b", ""))
	assert.Nil(t, c.Cache().Pod(ns, "a"), "nothing delivered yet")
	require.Len(t, c.Cache().Pending(), 4)

	// Delivering a's update first delivers a's add before it; b waits.
	require.NoError(t, c.Cache().DeliverAt(2))
	assert.Equal(t, []string{"add a", "update a"}, seen)
	assert.Equal(t, corev1.PodRunning, c.Cache().Pod(ns, "a").Status.Phase)
	assert.Nil(t, c.Cache().Pod(ns, "b"))

	// b's add is delivered silently, its delete normally.
	require.NoError(t, c.Cache().DropAt(0))
	assert.NotNil(t, c.Cache().Pod(ns, "b"), "the cache has b without any handler hearing of it")
	assert.Equal(t, 1, c.Cache().DeliverAll())
	assert.Equal(t, []string{"add a", "update a", "delete b"}, seen)
	assert.Nil(t, c.Cache().Pod(ns, "b"))
	assert.Error(t, c.Cache().DeliverAt(0), "nothing pending")

	assert.Equal(t, []*corev1.Pod{c.Cache().Pod(ns, "a")}, c.Cache().Pods(ns))
	_ = a
}

func TestCacheDeliverDueAndLatency(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{EventLatency: 2 * time.Second})
	_, err := c.CreatePod(t.Context(), newPod("a"))
	require.NoError(t, err)
	c.SetEventLatency(0)
	_, err = c.CreatePod(t.Context(), newPod("b"))
	require.NoError(t, err)
	require.NoError(t, c.Kubelet().Run(ns, "a")) // due now, but after a's add, which is not
	assert.Equal(t, 1, c.Cache().DeliverDue(), "b's add only")
	assert.NotNil(t, c.Cache().Pod(ns, "b"))
	assert.Nil(t, c.Cache().Pod(ns, "a"))
	c.Clock().Step(2 * time.Second)
	assert.Equal(t, 2, c.Cache().DeliverDue())
	assert.Equal(t, corev1.PodRunning, c.Cache().Pod(ns, "a").Status.Phase)
	assert.Zero(t, c.Cache().DeliverN(5))
}

func TestCacheResetAndJobs(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	var jobEvents []string
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		switch {
		case ev.Old == nil:
			jobEvents = append(jobEvents, "added "+ev.New.Namespace)
		case ev.New == nil:
			jobEvents = append(jobEvents, "deleted "+ev.Old.Namespace)
		default:
			jobEvents = append(jobEvents, "updated "+ev.New.Namespace)
		}
	})
	j, err := c.Jobs().Create(reconciletest.NewJob(ns, "j", 1, 1))
	require.NoError(t, err)
	_, err = c.Jobs().Create(reconciletest.NewJob("a-first", "j", 1, 1))
	require.NoError(t, err)
	orphan := newPod("orphan")
	orphan.Labels = j.Spec.Template.Labels
	_, err = c.AddPod(orphan)
	require.NoError(t, err)
	_, err = c.AddPod(newPod("unrelated"))
	require.NoError(t, err)
	c.Cache().DeliverAll()
	require.NoError(t, c.Jobs().Delete("a-first", "j"))
	c.Cache().DeliverAll()
	assert.Equal(t, []string{"added " + ns, "added a-first", "deleted a-first"}, jobEvents)

	pods, err := c.Cache().OwnerPods(plan.JobWorkload(c.Jobs().Cached(ns, "j")))
	require.NoError(t, err)
	require.Len(t, pods, 1, "the orphan matching the selector")
	assert.Equal(t, "orphan", pods[0].Name)

	c.Cache().Reset()
	assert.Nil(t, c.Jobs().Cached(ns, "j"))
	var kinds []string
	for _, ev := range c.Cache().Pending() {
		kinds = append(kinds, string(ev.Type)+" "+ev.String()[len(ev.Type)+1:])
	}
	want := []string{"ADDED job ns/j rv=1", "ADDED pod ns/orphan rv=3", "ADDED pod ns/unrelated rv=4"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events after Reset (-want +got):\n%s", diff)
	}
	c.Cache().DeliverAll()
	assert.Len(t, c.Jobs().CachedList(), 1)
	assert.Len(t, c.Cache().Pods(""), 2)
}

func TestOnWrite(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	var types []watch.EventType
	c.OnWrite(func(ev reconciletest.WatchEvent) { types = append(types, ev.Type) })
	p, err := c.CreatePod(t.Context(), newPod("p"))
	require.NoError(t, err)
	require.NoError(t, c.DeletePod(t.Context(), ns, "p", p.UID))
	assert.Equal(t, []watch.EventType{watch.Added, watch.Deleted}, types)
}

func TestKubelet(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	k := c.Kubelet()
	mk := func(name string, policy corev1.RestartPolicy) {
		p := newPod(name)
		p.Spec.RestartPolicy = policy
		_, err := c.CreatePod(t.Context(), p)
		require.NoError(t, err)
	}
	mk("a", corev1.RestartPolicyNever)
	mk("b", corev1.RestartPolicyOnFailure)

	assert.Error(t, k.SetReady(ns, "a", true), "not running")
	assert.Error(t, k.Run(ns, "missing"))
	require.NoError(t, k.Run(ns, "a"))
	assert.Error(t, k.Run(ns, "a"), "already running")
	require.NoError(t, k.SetReady(ns, "a", true))
	a, _ := c.GetPod(t.Context(), ns, "a")
	assert.Equal(t, "sim-node", a.Spec.NodeName)
	assert.True(t, podReady(a))
	assert.Error(t, k.RestartContainer(ns, "a"), "restartPolicy Never")
	assert.Error(t, k.Fail(ns, "a", 0), "exit code 0 is no failure")
	require.NoError(t, k.Fail(ns, "a", 42))
	a, _ = c.GetPod(t.Context(), ns, "a")
	assert.Equal(t, corev1.PodFailed, a.Status.Phase)
	assert.Equal(t, int32(42), a.Status.ContainerStatuses[0].State.Terminated.ExitCode)
	assert.False(t, podReady(a))
	assert.Error(t, k.Succeed(ns, "a"), "already finished")

	require.NoError(t, k.Run(ns, "b"))
	require.NoError(t, k.RestartContainer(ns, "b"))
	require.NoError(t, k.RestartContainer(ns, "b"))
	b, _ := c.GetPod(t.Context(), ns, "b")
	assert.Equal(t, int32(2), b.Status.ContainerStatuses[0].RestartCount)
	assert.Equal(t, corev1.PodRunning, b.Status.Phase)
	require.NoError(t, k.Evict(ns, "b"))
	b, _ = c.GetPod(t.Context(), ns, "b")
	assert.Equal(t, corev1.PodFailed, b.Status.Phase)
	assert.Equal(t, "Evicted", b.Status.Reason)
	found := false
	for _, cond := range b.Status.Conditions {
		if cond.Type == corev1.DisruptionTarget && cond.Status == corev1.ConditionTrue {
			found = true
		}
	}
	assert.True(t, found, "DisruptionTarget condition: %+v", b.Status.Conditions)
	assert.Error(t, k.FinishTermination(ns, "b"), "not being deleted")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestKubeletScripts(t *testing.T) {
	c := reconciletest.NewCluster(reconciletest.Options{})
	for _, n := range []string{"a", "b", "c"} {
		_, err := c.CreatePod(t.Context(), newPod(n))
		require.NoError(t, err)
	}
	c.Kubelet().SetScript(reconciletest.FailFirst(1, 7))
	require.NoError(t, c.Kubelet().Step())
	for _, p := range c.ListPods(ns) {
		assert.Equal(t, corev1.PodRunning, p.Status.Phase, p.Name)
	}
	require.NoError(t, c.Kubelet().Step())
	var phases []corev1.PodPhase
	for _, p := range c.ListPods(ns) {
		phases = append(phases, p.Status.Phase)
	}
	assert.Equal(t, []corev1.PodPhase{corev1.PodFailed, corev1.PodSucceeded, corev1.PodSucceeded}, phases, "in creation order")
	c.Kubelet().SetScript(func(*reconciletest.Kubelet, *corev1.Pod) error { return assert.AnError })
	assert.ErrorIs(t, c.Kubelet().Step(), assert.AnError)
}
