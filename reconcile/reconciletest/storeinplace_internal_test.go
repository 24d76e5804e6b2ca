package reconciletest

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// agent plays JobSet's in-place restart agent in every pod of a group, as a
// Kubelet script: a container that (re)starts reports the attempt after the
// group's current one (0 at first); a pod whose attempt is at most the
// group's previous one restarts its container (the agent exits); a pod on the
// current attempt runs its worker (the barrier is lifted). crash, when set,
// names a working pod whose worker fails once (its container restarts).
type agent struct {
	t     *testing.T
	group func() (previous, current *int32)
	// reported is the restart count of each pod's container when its agent
	// last reported an attempt: an agent's state is lost when its container
	// restarts.
	reported map[string]int32
	working  map[string]int32 // the attempt each working pod runs
	crash    string
}

func (a *agent) script(k *Kubelet, pod *corev1.Pod) error {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	if pod.Status.Phase == corev1.PodPending {
		if err := k.Run(pod.Namespace, pod.Name); err != nil {
			return err
		}
		return k.SetReady(pod.Namespace, pod.Name, true)
	}
	if pod.Status.Phase != corev1.PodRunning {
		return nil
	}
	restarts := pod.Status.ContainerStatuses[0].RestartCount
	previous, current := a.group()
	if r, ok := a.reported[pod.Name]; !ok || r != restarts {
		attempt := int32(0)
		if current != nil {
			attempt = *current + 1
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, plaingroup.AnnotationInPlaceRestartAttempt, strconv.Itoa(int(attempt)))
		if _, err := k.c.PatchPodAs(pod.Namespace, pod.Name, []byte(patch)); err != nil {
			return err
		}
		a.reported[pod.Name] = restarts
		delete(a.working, pod.Name)
		return nil
	}
	attempt, err := strconv.Atoi(pod.Annotations[plaingroup.AnnotationInPlaceRestartAttempt])
	if err != nil {
		return err
	}
	switch {
	case previous != nil && int32(attempt) <= *previous:
		delete(a.working, pod.Name)
		return k.RestartContainer(pod.Namespace, pod.Name)
	case pod.Name == a.crash && a.working[pod.Name] == int32(attempt):
		a.crash = ""
		delete(a.working, pod.Name)
		return k.RestartContainer(pod.Namespace, pod.Name)
	case current != nil && int32(attempt) == *current:
		a.working[pod.Name] = int32(attempt)
	}
	// The barrier: every worker running is on one attempt.
	for name, w := range a.working {
		for other, o := range a.working {
			if w != o {
				a.t.Errorf("pod %s works on attempt %d beside pod %s on attempt %d", name, w, other, o)
			}
		}
	}
	return nil
}

// A group of a leader (one pod) and two workers (two pods each) restarted in
// place on the rig, its agents played by the test: the pods report attempt 0,
// the barrier lifts (current 0); a worker's container fails, its agent reports
// attempt 1 and the group's previous attempt becomes 0, so every other pod
// restarts its container in place and reports 1; the barrier lifts again
// (current 1). No child Job and no pod is deleted or created, the group's
// restart counters stay 0, and no worker ever runs beside one of another
// attempt.
func TestStoreInPlaceRestart(t *testing.T) {
	c, s := NewStore(Options{Owner: groupKind, Seed: 7}, groupType)
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: groupKind, Clock: c.Clock()}, nil, nil)
	require.NoError(t, err)
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n),
			BackoffLimit: ptr.To[int32](math.MaxInt32), PodReplacementPolicy: ptr.To(batchv1.Failed),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{Name: "main", Image: "x"}}}}}}
	}
	_, err = s.Create(&testGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"},
		Spec: plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 2}},
			FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 3, RestartStrategy: plaingroup.InPlaceRestart}},
		Templates: []batchv1.JobTemplateSpec{tmpl(1), tmpl(2)}})
	require.NoError(t, err)
	status := func() (*int32, *int32) {
		g, err := s.Get("ns", "train")
		require.NoError(t, err)
		return g.Status.PreviousInPlaceRestartAttempt, g.Status.CurrentInPlaceRestartAttempt
	}
	ag := &agent{t: t, group: status, reported: map[string]int32{}, working: map[string]int32{}}
	c.Kubelet().SetScript(ag.script)
	d := NewDriver(c, r)
	d.SyncFunc = s.SyncFunc(r)
	ctx := context.Background()
	runUntil := func(what string, done func() bool) {
		t.Helper()
		for range 40 {
			if done() {
				return
			}
			_, err := d.Step(ctx, "ns", "train")
			require.NoError(t, err)
		}
		t.Fatalf("not reached in 40 steps: %s", what)
	}
	uids := func() map[string]types.UID {
		out := map[string]types.UID{}
		for _, j := range c.Jobs().List() {
			out["job "+j.Name] = j.UID
		}
		for _, p := range c.ListPods("ns") {
			out["pod "+p.Name] = p.UID
		}
		return out
	}
	runUntil("every worker on attempt 0", func() bool {
		_, cur := status()
		return cur != nil && *cur == 0 && len(ag.working) == 5
	})
	before := uids()
	require.Len(t, before, 3+5)
	for name := range ag.working {
		if ag.crash == "" || name > ag.crash {
			ag.crash = name // a deterministic pick: the last name
		}
	}
	c.ResetCalls()
	runUntil("every worker on attempt 1", func() bool {
		_, cur := status()
		return cur != nil && *cur == 1 && len(ag.working) == 5
	})
	require.Empty(t, ag.crash, "the worker crashed")
	for _, call := range c.Calls() {
		require.NotContains(t, []Op{OpCreatePod, OpDeletePod}, call.Op, "call %d on pod %s", call.Seq, call.Name)
	}
	prev, cur := status()
	require.Equal(t, ptr.To[int32](0), prev)
	require.Equal(t, ptr.To[int32](1), cur)
	require.Equal(t, before, uids(), "no child Job and no pod replaced")
	for _, p := range c.ListPods("ns") {
		require.Equal(t, int32(1), p.Status.ContainerStatuses[0].RestartCount, "pod %s restarted once, in place", p.Name)
	}
	g, err := s.Get("ns", "train")
	require.NoError(t, err)
	require.Zero(t, g.Status.Restarts)
	require.Zero(t, g.Status.RestartsCountTowardsMax)
	require.Empty(t, g.Status.TerminalState)
}
