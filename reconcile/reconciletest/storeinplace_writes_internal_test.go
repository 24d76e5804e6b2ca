package reconciletest

import (
	"context"
	"math"
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

// restartWrites are the API writes of one restart of a group, counted from the
// failure to the group running again.
type restartWrites struct {
	calls        map[Op]int // the controllers' calls, by operation
	agentPatches int        // the agents' annotations (in place only)
	jobsReplaced int        // child Jobs deleted and created again (the group's own writes)
	podsReplaced int        // pods of the first attempt gone
	steps        int
}

// runRestartWrites runs a group of a leader (one pod) and a worker role of one
// child of `workers` pods until every pod runs, fails one worker, and runs
// until every pod runs again: with InPlaceRestart (the test playing the
// agents, the worker's container failing) or Recreate (the worker's pod
// failing, which fails its child Job and restarts the group).
func runRestartWrites(t *testing.T, workers int32, inPlace bool) restartWrites {
	t.Helper()
	c, s := NewStore(Options{Owner: groupKind, Seed: 11}, groupType)
	r, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: groupKind, Clock: c.Clock()}, nil, nil)
	require.NoError(t, err)
	policy := &plaingroup.FailurePolicy{MaxRestarts: 3}
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		t := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "x"}}}}}}
		if inPlace {
			t.Spec.BackoffLimit, t.Spec.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
			t.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		return t
	}
	if inPlace {
		policy.RestartStrategy = plaingroup.InPlaceRestart
	}
	_, err = s.Create(&testGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"},
		Spec:      plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 1}}, FailurePolicy: policy},
		Templates: []batchv1.JobTemplateSpec{tmpl(1), tmpl(workers)}})
	require.NoError(t, err)
	group := func() *testGroup {
		g, err := s.Get("ns", "train")
		require.NoError(t, err)
		return g
	}
	ag := &agent{t: t, reported: map[string]int32{}, working: map[string]int32{},
		group: func() (*int32, *int32) {
			st := group().Status
			return st.PreviousInPlaceRestartAttempt, st.CurrentInPlaceRestartAttempt
		}}
	patches := 0
	running := func(k *Kubelet, pod *corev1.Pod) error { // Recreate: pods start and keep running
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodPending {
			if err := k.Run(pod.Namespace, pod.Name); err != nil {
				return err
			}
			return k.SetReady(pod.Namespace, pod.Name, true)
		}
		return nil
	}
	if inPlace {
		c.Kubelet().SetScript(func(k *Kubelet, pod *corev1.Pod) error {
			before := len(ag.reported)
			restarts := ag.reported[pod.Name]
			err := ag.script(k, pod)
			if len(ag.reported) != before || ag.reported[pod.Name] != restarts {
				patches++
			}
			return err
		})
	} else {
		c.Kubelet().SetScript(running)
	}
	d := NewDriver(c, r)
	d.SyncFunc = s.SyncFunc(r)
	all := int(workers) + 1
	steps := 0
	runUntil := func(what string, done func() bool) {
		t.Helper()
		for range 200 {
			if done() {
				return
			}
			_, err := d.Step(context.Background(), "ns", "train")
			require.NoError(t, err)
			steps++
		}
		t.Fatalf("not reached in 200 steps: %s", what)
	}
	// readyPods counts the running, ready pods of a group restart attempt.
	readyPods := func(attempt string) int {
		n := 0
		for _, p := range c.ListPods("ns") {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Labels[plaingroup.LabelRestartAttempt] == attempt {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						n++
					}
				}
			}
		}
		return n
	}
	if inPlace {
		runUntil("every worker on attempt 0", func() bool { return len(ag.working) == all })
	} else {
		runUntil("every pod running", func() bool { return readyPods("0") == all && len(c.ListPods("ns")) == all })
	}
	first := map[types.UID]bool{}
	for _, p := range c.ListPods("ns") {
		first[p.UID] = true
	}
	jobs := map[types.UID]bool{}
	for _, j := range c.Jobs().List() {
		jobs[j.UID] = true
	}
	c.ResetCalls()
	patches, steps = 0, 0
	var victim string
	for _, p := range c.ListPods("ns") {
		if p.Labels[plaingroup.LabelRoleName] == "workers" {
			victim = p.Name
		}
	}
	if inPlace {
		ag.crash = victim
		runUntil("every worker on attempt 1", func() bool {
			cur := group().Status.CurrentInPlaceRestartAttempt
			return cur != nil && *cur == 1 && len(ag.working) == all
		})
	} else {
		require.NoError(t, c.Kubelet().Fail("ns", victim, 1))
		runUntil("every pod of attempt 1 running", func() bool {
			return group().Status.Restarts == 1 && readyPods("1") == all && len(c.ListPods("ns")) == all
		})
	}
	out := restartWrites{calls: map[Op]int{}, agentPatches: patches, steps: steps}
	for _, call := range c.Calls() {
		if call.Written {
			out.calls[call.Op]++
		}
	}
	for _, j := range c.Jobs().List() {
		if !jobs[j.UID] {
			out.jobsReplaced++
		}
	}
	for uid := range first {
		gone := true
		for _, p := range c.ListPods("ns") {
			if p.UID == uid {
				gone = false
			}
		}
		if gone {
			out.podsReplaced++
		}
	}
	return out
}

// One restart of 1 leader and 64 workers, in place and by recreation: the
// writes each takes. In place, no pod and no Job is replaced: the agents write
// one annotation per pod, the Job controller the workers' Job status as their
// readiness changes, the group its status; recreated, both child Jobs and all
// 65 pods are replaced (65 creations, 65 finalizer patches, the deletions by
// the garbage collector). The counts are logged for docs/jobset.md.
func TestInPlaceVersusRecreateWrites(t *testing.T) {
	in := runRestartWrites(t, 64, true)
	re := runRestartWrites(t, 64, false)
	t.Logf("in place: %+v", in)
	t.Logf("recreate: %+v", re)
	require.Zero(t, in.jobsReplaced)
	require.Zero(t, in.podsReplaced)
	require.Zero(t, in.calls[OpCreatePod]+in.calls[OpDeletePod])
	require.Equal(t, 65, in.agentPatches, "one report per pod")
	require.Equal(t, 2, re.jobsReplaced)
	require.Equal(t, 65, re.podsReplaced)
	require.Equal(t, 65, re.calls[OpCreatePod])
	inWrites, reWrites := 0, 2*re.jobsReplaced // the group's child Job deletions and creations
	for _, n := range in.calls {
		inWrites += n
	}
	for _, n := range re.calls {
		reWrites += n
	}
	require.LessOrEqual(t, inWrites+in.agentPatches, 80, "in place: the controllers' writes and one annotation per pod")
	require.GreaterOrEqual(t, reWrites, 3*65, "recreate: every pod created, its finalizer removed, deleted")
}
