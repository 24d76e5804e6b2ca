package ownedpods_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

func envOf(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func TestComputeCreatesEveryRolesPods(t *testing.T) {
	w := trainingJob(3, 1)
	w.Roles[1].DependsOn = nil // both roles start at once
	w.Roles[0].Spec.Template.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	w.Roles[0].Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "JOBKIT_ROLE", Value: "mine"}}
	c := newCluster(t, w)
	p := c.compute()
	require.Empty(t, p.Skip)
	require.Len(t, p.Create, 4)
	var hostnames []string
	for _, cr := range p.Create {
		pod := cr.Pod
		role := pod.Labels[plaingroup.LabelRoleName]
		assert.Equal(t, ownerName, pod.Labels[plaingroup.LabelJobSetName], pod.Name)
		assert.Equal(t, "0", pod.Labels[plaingroup.LabelRestartAttempt], pod.Name)
		assert.True(t, strings.HasPrefix(pod.Name+pod.GenerateName, ownerName+"-"+role+"-"), "pod %q of role %q", pod.Name+pod.GenerateName, role)
		assert.Contains(t, pod.Finalizers, kind.Finalizer)
		ref := metav1.GetControllerOf(pod)
		require.NotNil(t, ref)
		assert.Equal(t, ownerName, ref.Name, "the controller reference names the owner")
		assert.Equal(t, ownerUID, ref.UID)
		assert.Equal(t, "TrainingJob", ref.Kind)
		for _, ctr := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
			a, ok := envOf(ctr, "JOBKIT_RESTART_ATTEMPT")
			assert.True(t, ok && a == "0", "%s/%s JOBKIT_RESTART_ATTEMPT=%q", pod.Name, ctr.Name, a)
			r, _ := envOf(ctr, "JOBKIT_ROLE")
			want := role
			if role == "worker" && ctr.Name == "main" {
				want = "mine" // declared by the container: kept
			}
			assert.Equal(t, want, r, "%s/%s JOBKIT_ROLE", pod.Name, ctr.Name)
		}
		if role == "worker" {
			hostnames = append(hostnames, pod.Spec.Hostname)
		}
	}
	assert.Equal(t, []string{"train-worker-0", "train-worker-1", "train-worker-2"}, hostnames)
	require.Len(t, p.Roles, 2)
	assert.True(t, p.StatusChanged)
	require.Len(t, p.Status.Roles, 2)
	assert.Equal(t, "worker", p.Status.Roles[0].Name)
	assert.Equal(t, "launcher", p.Status.Roles[1].Name)
	// The template of the owner is not modified.
	assert.Empty(t, w.Roles[1].Spec.Template.Labels)
	assert.Len(t, w.Roles[1].Spec.Template.Spec.Containers[0].Env, 0)
}

func TestComputeLauncherWaitsForReadyWorkers(t *testing.T) {
	c := newCluster(t, trainingJob(3, 1))
	p := c.sync()
	require.Len(t, p.Create, 3, "the workers only: %s", summary(p))
	c.syncUntil(5)
	assert.Empty(t, c.role("launcher"))
	// Two of three ready is not ready.
	ws := c.role("worker")
	c.run(ws[0])
	c.run(ws[1])
	c.syncUntil(5)
	assert.Empty(t, c.role("launcher"))
	c.run(ws[2])
	// The sync that sees the workers ready creates the launcher.
	p = c.sync()
	require.Len(t, p.Create, 1, summary(p))
	assert.Equal(t, "launcher", p.Create[0].Pod.Labels[plaingroup.LabelRoleName])
	// A worker that stops being ready does not stop the launcher again.
	c.syncUntil(5)
	c.role("worker")[0].Status.Conditions = nil
	c.syncUntil(5)
	require.Len(t, c.role("launcher"), 1)
	assert.Nil(t, c.role("launcher")[0].DeletionTimestamp)
}

// started runs a training job up to a running launcher.
func started(t *testing.T, w *ownedpods.Workload) *cluster {
	c := newCluster(t, w)
	c.syncUntil(5)
	c.runAll("worker")
	c.syncUntil(5)
	c.runAll("launcher")
	c.syncUntil(5)
	require.Len(t, c.role("launcher"), 1)
	return c
}

func TestComputeSuccessOfLauncherCompletesAndStopsWorkers(t *testing.T) {
	c := started(t, trainingJob(3, 1))
	c.finish(c.role("launcher")[0], 0)
	p := c.sync()
	require.Len(t, p.RemoveFinalizers, 1, "the launcher is recorded, then its finalizer goes: %s", summary(p))
	assert.Zero(t, c.roleStatus("launcher").Succeeded, "not counted before its finalizer is gone")
	c.syncUntil(10)
	st := c.w.Status
	assert.Equal(t, "Completed", st.TerminalState)
	done := condition(st.Conditions, plaingroup.ConditionCompleted)
	require.NotNil(t, done)
	assert.Equal(t, metav1.ConditionTrue, done.Status)
	assert.Equal(t, "AllJobsCompleted", done.Reason)
	assert.Equal(t, int32(1), c.roleStatus("launcher").Succeeded)
	assert.Zero(t, c.roleStatus("worker").Failed, "stopped workers are not failures")
	assert.Empty(t, c.role("worker"), "the workers are stopped")
	assert.Equal(t, "the group has finished, no pod runs or carries the tracking finalizer "+kind.Finalizer, c.compute().Skip)
}

func TestComputeRestartsTheGroup(t *testing.T) {
	c := started(t, trainingJob(2, 2))
	ws := c.role("worker")
	c.finish(ws[0], 1)
	c.finish(c.role("launcher")[0], 0) // finished, recorded, counted before it goes
	c.sync()
	p := c.sync()
	// The worker role failed (its Failed condition) and the group restarts in
	// the same write.
	require.Equal(t, int32(1), c.w.Status.Restarts, summary(p))
	assert.Equal(t, int32(1), c.w.Status.RestartsCountTowardsMax)
	r := condition(c.w.Status.Conditions, plaingroup.ConditionRestarting)
	require.NotNil(t, r)
	assert.Equal(t, metav1.ConditionTrue, r.Status)
	assert.Equal(t, "DefaultFailurePolicy", r.Reason)
	assert.True(t, slices.ContainsFunc(p.Events, func(e plan.Event) bool { return e.Reason == "RestartJobSetFailurePolicyAction" }), "%v", p.Events)
	assert.True(t, slices.ContainsFunc(p.Events, func(e plan.Event) bool {
		return e.Reason == "MaxFailedIndexesExceeded" && strings.HasPrefix(e.Message, `role "worker": `)
	}), "the role's failure, named after the role: %v", p.Events)
	var totals []ownedpods.RoleStatus
	for range 10 {
		p = c.sync()
		totals = append(totals, c.w.Status.Roles...)
		for _, cr := range p.Create {
			require.Equal(t, "1", attemptOf(cr.Pod), "pods of attempt 1 only once nothing of attempt 0 is left")
			for _, old := range c.pods {
				require.NotEqual(t, "0", attemptOf(old), "pod %s of attempt 0 still there when attempt 1 starts", old.Name)
			}
		}
		if len(c.role("worker")) == 2 && attemptOf(c.role("worker")[0]) == "1" {
			break
		}
	}
	require.Len(t, c.role("worker"), 2)
	assert.Equal(t, "1", attemptOf(c.role("worker")[1]))
	assert.Equal(t, int32(1), c.roleStatus("worker").Attempt)
	assert.Equal(t, int32(1), c.roleStatus("launcher").Attempt)
	assert.Equal(t, int32(1), c.roleStatus("launcher").Succeeded, "the finished launcher was counted, over attempts")
	assert.Equal(t, int32(2), c.roleStatus("worker").Failed, "the failed worker and the one stopped by its role's failure")
	assert.Zero(t, c.roleStatus("worker").Job.Failed, "attempt 1 starts afresh")
	for i := 2; i < len(totals); i++ {
		if totals[i].Name == totals[i-2].Name {
			assert.GreaterOrEqual(t, totals[i].Succeeded, totals[i-2].Succeeded)
			assert.GreaterOrEqual(t, totals[i].Failed, totals[i-2].Failed)
		}
	}
	// The restart ends once every role has started again.
	c.runAll("worker")
	c.syncUntil(5)
	c.runAll("launcher")
	c.syncUntil(5)
	r = condition(c.w.Status.Conditions, plaingroup.ConditionRestarting)
	assert.Equal(t, metav1.ConditionFalse, r.Status)
}

func TestComputeFailsAfterMaxRestarts(t *testing.T) {
	c := started(t, trainingJob(1, 1))
	for attempt := range 2 {
		c.finish(c.role("worker")[0], 1)
		for range 10 {
			c.sync()
			if c.w.Status.TerminalState != "" || c.w.Status.Restarts > int32(attempt) && len(c.role("worker")) == 1 && attemptOf(c.role("worker")[0]) != "0" {
				break
			}
		}
		c.runAll("worker")
		c.syncUntil(5)
	}
	st := c.w.Status
	assert.Equal(t, int32(1), st.Restarts)
	assert.Equal(t, "Failed", st.TerminalState)
	f := condition(st.Conditions, plaingroup.ConditionFailed)
	require.NotNil(t, f)
	assert.Equal(t, "ReachedMaxRestarts", f.Reason)
	c.syncUntil(10)
	for _, p := range c.pods {
		assert.NotContains(t, p.Finalizers, kind.Finalizer, "pod %s", p.Name)
		assert.False(t, p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil, "pod %s still runs", p.Name)
	}
}

func TestComputeFailJobSetOnExitCode(t *testing.T) {
	w := trainingJob(2, 5)
	w.Roles[0].Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}},
	}}}
	w.Roles[0].Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	w.FailurePolicy.Rules = []plaingroup.Rule{{Name: "exit3", Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}}
	c := started(t, w)
	c.finish(c.role("worker")[1], 3)
	for range 6 {
		c.sync()
	}
	st := c.w.Status
	assert.Equal(t, "Failed", st.TerminalState)
	assert.Zero(t, st.Restarts)
	f := condition(st.Conditions, plaingroup.ConditionFailed)
	require.NotNil(t, f)
	assert.Equal(t, "FailJobSetFailurePolicyAction", f.Reason)
}

func TestComputeSuspendAndResume(t *testing.T) {
	c := started(t, trainingJob(2, 1))
	c.w.Suspend = true
	p := c.sync()
	require.Len(t, p.Delete, 3, summary(p))
	for _, d := range p.Delete {
		assert.True(t, d.RemoveFinalizerFirst, "%s is stopped, not counted", d.Pod.Name)
	}
	for _, e := range p.Events {
		assert.NotContains(t, e.Message, `role "`, "no role event for the suspension: %v", e)
	}
	s := condition(c.w.Status.Conditions, plaingroup.ConditionSuspended)
	require.NotNil(t, s)
	assert.Equal(t, metav1.ConditionTrue, s.Status)
	c.syncUntil(5)
	assert.Empty(t, c.pods)
	assert.Zero(t, c.roleStatus("worker").Failed)
	assert.Zero(t, c.roleStatus("launcher").Failed)
	c.w.Suspend = false
	p = c.sync()
	assert.Len(t, p.Create, 2, "the workers again; the launcher waits for them: %s", summary(p))
	assert.Equal(t, metav1.ConditionFalse, condition(c.w.Status.Conditions, plaingroup.ConditionSuspended).Status)
}

func TestComputeDeletingOwner(t *testing.T) {
	c := started(t, trainingJob(2, 1))
	c.w.Deleting = true
	c.finish(c.role("worker")[0], 0)
	p := c.sync()
	assert.Empty(t, p.Create)
	// The owner goes: every finalizer goes, the finished pod's counted.
	assert.Len(t, p.RemoveFinalizers, 3, summary(p))
	c.syncUntil(5)
	assert.Equal(t, int32(1), c.roleStatus("worker").Succeeded)
	assert.Zero(t, c.roleStatus("worker").Failed)
	for _, pod := range c.pods {
		assert.NotContains(t, pod.Finalizers, kind.Finalizer, pod.Name)
	}
}

func TestComputeStrays(t *testing.T) {
	c := started(t, trainingJob(1, 1))
	base := c.role("worker")[0]
	stray := func(name string, labels map[string]string) {
		p := base.DeepCopy()
		p.Name, p.UID = name, types.UID("uid-"+name)
		p.Labels = labels
		p.Status.Phase = corev1.PodSucceeded
		c.pods[name] = p
	}
	stray("no-role", map[string]string{})
	stray("other-role", map[string]string{plaingroup.LabelRoleName: "ps", plaingroup.LabelRestartAttempt: "0"})
	stray("bad-attempt", map[string]string{plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: "x"})
	stray("old-attempt", map[string]string{plaingroup.LabelRoleName: "worker", plaingroup.LabelRestartAttempt: "7"})
	p := c.sync()
	var deleted []string
	for _, d := range p.Delete {
		deleted = append(deleted, d.Pod.Name)
		assert.True(t, d.RemoveFinalizerFirst, d.Pod.Name)
	}
	slices.Sort(deleted)
	assert.Equal(t, []string{"bad-attempt", "no-role", "old-attempt", "other-role"}, deleted)
	for _, want := range []string{"no-role", `"ps"`, `"x"`, `"7"`} {
		assert.True(t, slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, want) }), "no warning names %s: %q", want, p.Warnings)
	}
	c.syncUntil(5)
	assert.Zero(t, c.roleStatus("worker").Succeeded, "strays are never counted")
	assert.Len(t, c.pods, 2)
}

func TestComputeStopsAPodLeftRunningAfterTheGroupFinished(t *testing.T) {
	c := started(t, trainingJob(2, 1))
	c.finish(c.role("launcher")[0], 0)
	c.syncUntil(10)
	require.Equal(t, "Completed", c.w.Status.TerminalState)
	// A stop whose finalizer removal happened and whose deletion did not.
	p := c.role("launcher")[0].DeepCopy()
	p.Name, p.UID = "train-worker-0-left", "uid-left"
	p.Labels["jobset.sigs.k8s.io/replicatedjob-name"] = "worker"
	p.Finalizers = nil
	c.run(p)
	c.pods[p.Name] = p
	plan := c.sync()
	require.Empty(t, plan.Skip)
	require.Len(t, plan.Delete, 1, summary(plan))
	assert.Equal(t, p.Name, plan.Delete[0].Pod.Name)
	assert.Equal(t, int32(1), ptr.Deref(c.roleStatus("worker").Job.Terminating, 0), "the stopped pod is terminating")
	plan = c.sync()
	require.Empty(t, plan.Skip, "the write that shows the pod gone")
	assert.Zero(t, ptr.Deref(c.roleStatus("worker").Job.Terminating, 0))
	assert.NotEmpty(t, c.compute().Skip)
}

func TestComputeInOrderStartup(t *testing.T) {
	w := trainingJob(2, 1)
	w.Roles[1].DependsOn = nil
	w.StartupOrder = plaingroup.InOrder
	c := newCluster(t, w)
	p := c.sync()
	require.Len(t, p.Create, 2, "the workers first: %s", summary(p))
	progress := condition(c.w.Status.Conditions, plaingroup.ConditionStartupPolicyInProgress)
	require.NotNil(t, progress)
	assert.Equal(t, metav1.ConditionTrue, progress.Status)
	c.syncUntil(5)
	assert.Empty(t, c.role("launcher"))
	c.runAll("worker")
	c.syncUntil(5)
	require.Len(t, c.role("launcher"), 1)
	c.runAll("launcher")
	c.syncUntil(5)
	done := condition(c.w.Status.Conditions, plaingroup.ConditionStartupPolicyCompleted)
	require.NotNil(t, done)
	assert.Equal(t, metav1.ConditionTrue, done.Status)
	assert.Equal(t, metav1.ConditionFalse, condition(c.w.Status.Conditions, plaingroup.ConditionStartupPolicyInProgress).Status)
}

func TestComputeSkips(t *testing.T) {
	w := trainingJob(1, 1)
	w.ManagedBy = ptr.To("someone-else")
	p, err := ownedpods.Compute(ownedpods.Input{Workload: w, ControllerName: controller, Owner: kind, Now: t0})
	require.NoError(t, err)
	assert.Equal(t, `spec.managedBy is "someone-else", not "`+controller+`"`, p.Skip)
	assert.Empty(t, p.Create)

	w.ManagedBy = ptr.To(controller)
	p, err = ownedpods.Compute(ownedpods.Input{Workload: w, ControllerName: controller, Owner: kind, Now: t0, ExpectationsSatisfied: true})
	require.NoError(t, err)
	assert.Empty(t, p.Skip)
	assert.NotEmpty(t, p.Create)

	w.Status.TerminalState = "Completed"
	p, err = ownedpods.Compute(ownedpods.Input{Workload: w, ControllerName: controller, Owner: kind, Now: t0, ExpectationsSatisfied: true})
	require.NoError(t, err)
	assert.NotEmpty(t, p.Skip)
	// ...unless something is still to be counted.
	w.Status.Roles = []ownedpods.RoleStatus{{Name: "launcher", Job: batchv1.JobStatus{UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}}}}}
	p, err = ownedpods.Compute(ownedpods.Input{Workload: w, ControllerName: controller, Owner: kind, Now: t0, ExpectationsSatisfied: true})
	require.NoError(t, err)
	assert.Empty(t, p.Skip)
	assert.Equal(t, int32(1), p.Status.Roles[1].Succeeded, "the last recorded pod is counted")
	assert.Empty(t, p.Create)
}

func TestComputeStatusEntries(t *testing.T) {
	w := trainingJob(1, 1)
	w.Status.Roles = []ownedpods.RoleStatus{
		{Name: "gone", Succeeded: 4},
		{Name: "launcher", Succeeded: 2, Failed: 1},
	}
	p, err := ownedpods.Compute(ownedpods.Input{Workload: w, ControllerName: controller, Owner: kind, Now: t0, ExpectationsSatisfied: true})
	require.NoError(t, err)
	require.Len(t, p.Status.Roles, 2)
	assert.Equal(t, ownedpods.RoleStatus{Name: "worker"}, ownedpods.RoleStatus{Name: p.Status.Roles[0].Name, Succeeded: p.Status.Roles[0].Succeeded})
	assert.Equal(t, int32(2), p.Status.Roles[1].Succeeded)
	assert.Equal(t, int32(1), p.Status.Roles[1].Failed)
	assert.True(t, slices.ContainsFunc(p.Warnings, func(s string) bool { return strings.Contains(s, `"gone"`) }), "%q", p.Warnings)
}

func TestComputeInvalid(t *testing.T) {
	long := strings.Repeat("a", 55)
	tests := []struct {
		name   string
		change func(*ownedpods.Input)
		want   []string // in the message: the field and the value
	}{
		{"nil workload", func(in *ownedpods.Input) { in.Workload = nil }, []string{"Input.Workload"}},
		{"no controller name", func(in *ownedpods.Input) { in.ControllerName = "" }, []string{"Input.ControllerName"}},
		{"no roles", func(in *ownedpods.Input) { in.Workload.Roles = nil }, []string{"roles"}},
		{"no owner kind", func(in *ownedpods.Input) { in.Owner = owner.Kind{} }, []string{"Input.Owner", "Required"}},
		{"a Job as the owner", func(in *ownedpods.Input) { in.Owner = owner.BatchJob }, []string{"Input.Owner", "batch"}},
		{"bad owner kind", func(in *ownedpods.Input) { in.Owner.Version = "" }, []string{"Input.Owner", "TrainingJob"}},
		{"role name not a DNS label", func(in *ownedpods.Input) { in.Workload.Roles[0].Name = "Work_er" }, []string{"roles[0].name", `"Work_er"`}},
		{"repeated role", func(in *ownedpods.Input) { in.Workload.Roles[1].Name = "worker"; in.Workload.Roles[1].DependsOn = nil }, []string{"roles[1].name", `"worker"`}},
		{"hostname too long", func(in *ownedpods.Input) { in.Workload.Name = long }, []string{"roles[0].name", long + "-worker-2"}},
		{"bad role spec", func(in *ownedpods.Input) { in.Workload.Roles[0].Spec.Completions = nil }, []string{"roles[0]", `"worker"`}},
		{"bad pattern", func(in *ownedpods.Input) {
			in.Workload.FailurePolicy.Rules = []plaingroup.Rule{{Name: "r", Action: plaingroup.FailJobSet, OnJobFailureMessagePatterns: []string{"("}}}
		}, []string{"failurePolicy.rules[0].onJobFailureMessagePatterns[0]", `"("`}},
		{"restart job ignoring max", func(in *ownedpods.Input) {
			in.Workload.FailurePolicy.Rules = []plaingroup.Rule{{Name: "r", Action: plaingroup.RestartJobAndIgnoreMaxRestarts}}
		}, []string{"failurePolicy.rules[0].action", "RestartJobAndIgnoreMaxRestarts"}},
		{"restart job", func(in *ownedpods.Input) {
			in.Workload.FailurePolicy.Rules = []plaingroup.Rule{{Name: "r", Action: plaingroup.RestartJob}}
		}, []string{"failurePolicy.rules[0].action", "RestartJob", "not supported"}},
		{"success target unknown", func(in *ownedpods.Input) { in.Workload.SuccessPolicy.TargetReplicatedJobs = []string{"ps"} }, []string{"successPolicy.targetReplicatedJobs[0]", `"ps"`}},
		{"depends on later role", func(in *ownedpods.Input) {
			in.Workload.Roles[1].DependsOn = nil
			in.Workload.Roles[0].DependsOn = []plaingroup.Dependency{{Name: "launcher", Status: plaingroup.DependsOnReady}}
		}, []string{"roles[0].dependsOn", "launcher"}},
		{"depends on unknown role", func(in *ownedpods.Input) {
			in.Workload.Roles[1].DependsOn = []plaingroup.Dependency{{Name: "ps", Status: plaingroup.DependsOnReady}}
		}, []string{"roles[1].dependsOn[0].name", `"ps"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := ownedpods.Input{Workload: trainingJob(3, 1), ControllerName: controller, Owner: kind, Now: t0, ExpectationsSatisfied: true}
			tt.change(&in)
			p, err := ownedpods.Compute(in)
			require.Error(t, err)
			assert.Nil(t, p)
			assert.True(t, errors.Is(err, plan.ErrInvalidJob), "%v does not wrap ErrInvalidJob", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestComputeRoleBackoffAndWarnings(t *testing.T) {
	w := trainingJob(2, 1)
	w.Roles[0].Spec.BackoffLimitPerIndex = ptr.To[int32](2)
	w.Roles[0].Spec.MaxFailedIndexes = nil
	w.Roles[0].Backoff = plainbackoff.Policy{Base: 3 * time.Second, Max: time.Minute}
	c := started(t, w)
	c.finish(c.role("worker")[0], 1)
	c.sync() // recorded, finalizer removed
	p := c.sync()
	assert.Empty(t, p.Create, "index 0 waits for its backoff")
	assert.Greater(t, p.RequeueAfter, time.Duration(0))
	assert.LessOrEqual(t, p.RequeueAfter, 3*time.Second, "the role's own backoff")
	assert.True(t, strings.HasPrefix(p.RequeueReason, `role "worker": `), p.RequeueReason)

	bad := c.role("worker")[1]
	bad.Annotations[kind.IndexKey()] = "nine"
	p = c.compute()
	assert.True(t, slices.ContainsFunc(p.Warnings, func(s string) bool {
		return strings.HasPrefix(s, `role "worker": `) && strings.Contains(s, "nine")
	}), "%q", p.Warnings)
}

func TestComputeRestartStrategies(t *testing.T) {
	tests := []struct {
		strategy plaingroup.RestartStrategy
		// wantWorkerAttempt is the worker role's attempt while the old launcher
		// still terminates.
		wantWorkerAttempt int32
	}{
		{plaingroup.Recreate, 1},
		{plaingroup.BlockingRecreate, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.strategy), func(t *testing.T) {
			w := trainingJob(1, 2)
			w.Roles[1].DependsOn = nil
			w.FailurePolicy.RestartStrategy = tt.strategy
			c := started(t, w)
			c.linger = true
			c.finish(c.role("worker")[0], 1)
			for range 6 {
				c.sync()
				if ws := c.role("worker"); len(ws) == 1 && ws[0].DeletionTimestamp != nil {
					c.terminate(ws[0]) // the old worker goes; the old launcher lingers
				}
			}
			require.Equal(t, int32(1), c.w.Status.Restarts)
			require.Len(t, c.role("launcher"), 1)
			require.NotNil(t, c.role("launcher")[0].DeletionTimestamp, "the old launcher terminates")
			assert.Equal(t, tt.wantWorkerAttempt, c.roleStatus("worker").Attempt)
			assert.Equal(t, int32(0), c.roleStatus("launcher").Attempt)
			assert.NotContains(t, c.role("launcher")[0].Finalizers, kind.Finalizer, "stopped with its finalizer removed first")
			c.terminate(c.role("launcher")[0])
			c.syncUntil(6)
			assert.Equal(t, int32(1), c.roleStatus("worker").Attempt)
			assert.Equal(t, int32(1), c.roleStatus("launcher").Attempt)
			for _, p := range c.pods {
				assert.Equal(t, "1", attemptOf(p), p.Name)
			}
			assert.Zero(t, c.roleStatus("launcher").Failed, "the launcher stopped by the restart is not a failure")
			assert.Equal(t, int32(1), c.roleStatus("worker").Failed)
		})
	}
}
