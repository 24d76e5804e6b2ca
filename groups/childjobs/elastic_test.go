package childjobs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// running returns a world of a leader and n workers whose children all run
// with every pod ready.
func running(t *testing.T, n int32) *world {
	w := &world{t: t, in: leaderWorkers(n)}
	w.sync(t0)
	for _, j := range w.in.Children {
		w.ready(j.Name)
	}
	w.sync(t0.Add(time.Second))
	return w
}

func roleStatus(st childjobs.Status, name string) plaingroup.RoleStatus {
	for _, s := range st.ReplicatedJobs {
		if s.Name == name {
			return s
		}
	}
	return plaingroup.RoleStatus{}
}

func TestScaleDownDeletesFromTheTop(t *testing.T) {
	w := running(t, 4)
	w.in.Spec.Roles[1].Replicas = 2
	p := w.sync(t0.Add(time.Minute))
	assert.Equal(t, []string{"js-workers-3", "js-workers-2"}, deleted(p))
	for _, d := range p.Delete {
		assert.Contains(t, d.Reason, "scaled down")
		assert.Equal(t, "Foreground", string(d.Propagation))
	}
	assert.Empty(t, p.Create)
	assert.Equal(t, plaingroup.RoleStatus{Name: "workers", Ready: 2, Active: 2}, roleStatus(p.Status, "workers"),
		"the status counts the new size as soon as the deletions are asked for")

	// While the deletions run, nothing is deleted twice; once they are gone,
	// the group is steady at its new size.
	p = w.sync(t0.Add(2 * time.Minute))
	assert.True(t, p.IsEmpty(), "%s", p.String())
	w.gone()
	p = w.sync(t0.Add(3 * time.Minute))
	assert.True(t, p.IsEmpty(), "%s", p.String())

	// Success is over the new size: the leader and two workers.
	for _, n := range []string{"js-leader-0", "js-workers-0", "js-workers-1"} {
		w.finish(n, batchv1.JobComplete, "Completed", "", t0.Add(4*time.Minute))
	}
	p = w.sync(t0.Add(4 * time.Minute))
	require.NotNil(t, condition(p.Status, plaingroup.ConditionCompleted))
	assert.Equal(t, "True", string(condition(p.Status, plaingroup.ConditionCompleted).Status))
}

func TestScaledAwayChildFailureIsNotTheGroups(t *testing.T) {
	w := running(t, 4)
	w.finish("js-workers-3", batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0.Add(time.Minute))
	w.in.Spec.Roles[1].Replicas = 3
	p := w.sync(t0.Add(time.Minute))
	assert.Equal(t, []string{"js-workers-3"}, deleted(p))
	assert.Nil(t, condition(p.Status, plaingroup.ConditionFailed), "%s", p.String())
	assert.Equal(t, int32(0), p.Status.Restarts)
	assert.Equal(t, plaingroup.RoleStatus{Name: "workers", Ready: 3, Active: 3}, roleStatus(p.Status, "workers"))
}

func TestScaleUpWaitsForTheOldChildOfAnIndex(t *testing.T) {
	w := running(t, 3)
	w.in.Spec.Roles[1].Replicas = 1
	assert.Equal(t, []string{"js-workers-2", "js-workers-1"}, deleted(w.sync(t0.Add(time.Minute))))

	// Back up to 4 before the old children are gone: only index 3 is free.
	w.in.Spec.Roles[1].Replicas = 4
	p := w.sync(t0.Add(2 * time.Minute))
	assert.Empty(t, p.Delete)
	require.Equal(t, []string{"js-workers-3"}, names(jobsOf(p.Create)))
	assert.Equal(t, "4", p.Create[0].Job.Labels["jobset.sigs.k8s.io/replicatedjob-replicas"])
	assert.Equal(t, "5", p.Create[0].Job.Labels["jobset.sigs.k8s.io/global-replicas"])

	w.gone()
	p = w.sync(t0.Add(3 * time.Minute))
	assert.Equal(t, []string{"js-workers-1", "js-workers-2"}, names(jobsOf(p.Create)))
}

func TestScaleDownCutsThePerIndexCounters(t *testing.T) {
	w := running(t, 4)
	w.in.Status.ReplicatedJobs[1].JobRestarts = []int32{1, 0, 0, 2}
	w.in.Status.ReplicatedJobs[1].JobRestartsCountTowardsMax = []int32{1, 0, 0, 2}
	// The children carry the attempts of their indexes.
	for _, j := range w.in.Children {
		switch j.Name {
		case "js-workers-0":
			j.Labels[plaingroup.LabelJobRestartAttempt] = "1"
		case "js-workers-3":
			j.Labels[plaingroup.LabelJobRestartAttempt] = "2"
		}
	}
	w.in.Spec.Roles[1].Replicas = 2
	p := w.sync(t0.Add(time.Minute))
	st := roleStatus(p.Status, "workers")
	assert.Equal(t, []int32{1, 0}, st.JobRestarts)
	assert.Equal(t, []int32{1, 0}, st.JobRestartsCountTowardsMax)
}

func TestResizeAnIndexedRole(t *testing.T) {
	w := running(t, 2)
	w.finish("js-workers-1", batchv1.JobComplete, "Completed", "", t0.Add(time.Minute))
	w.in.Templates[1].Spec.Parallelism, w.in.Templates[1].Spec.Completions = ptr.To[int32](4), ptr.To[int32](4)
	before := w.job("js-workers-0").DeepCopy()

	p := w.sync(t0.Add(time.Minute))
	require.Len(t, p.Scale, 1, "%s", p.String())
	got := p.Scale[0].Job
	assert.Equal(t, "js-workers-0", got.Name)
	assert.Equal(t, ptr.To[int32](4), got.Spec.Parallelism)
	assert.Equal(t, ptr.To[int32](4), got.Spec.Completions)
	assert.Equal(t, before, w.job("js-workers-0"), "the Input's Job is not modified")
	assert.Contains(t, p.Scale[0].Reason, `role "workers" resized`)
	assert.Contains(t, p.String(), "scale 1: js-workers-0")
	// Its pods are no longer enough to make it ready.
	assert.Equal(t, int32(0), roleStatus(p.Status, "workers").Ready)

	// Applied, the group is steady: nothing to resize again.
	j := w.job("js-workers-0")
	j.Spec.Parallelism, j.Spec.Completions = got.Spec.Parallelism, got.Spec.Completions
	w.ready("js-workers-0")
	p = w.sync(t0.Add(2 * time.Minute))
	assert.Empty(t, p.Scale)
	assert.Equal(t, int32(1), roleStatus(p.Status, "workers").Ready)
}

func TestResizeNeedsCompletionsEqualParallelism(t *testing.T) {
	w := running(t, 2)
	w.in.Templates[1].Spec.Parallelism = ptr.To[int32](4) // completions stay 2
	p := w.sync(t0.Add(time.Minute))
	assert.Empty(t, p.Scale)
}

func TestValidateUpdateElastic(t *testing.T) {
	old := leaderWorkers(2)
	old.Default()
	in := *old
	in.Templates = []batchv1.JobTemplateSpec{*old.Templates[0].DeepCopy(), *old.Templates[1].DeepCopy()}
	in.Templates[1].Spec.Parallelism, in.Templates[1].Spec.Completions = ptr.To[int32](8), ptr.To[int32](8)
	assert.Empty(t, in.ValidateUpdate(old))

	finished := *old
	finished.Status.TerminalState = "Completed"
	errs := in.ValidateUpdate(&finished)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.replicatedJobs[1].template.spec: Forbidden: Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)", errs[0].Error())

	in.Templates[1].Spec.Completions = ptr.To[int32](6)
	errs = in.ValidateUpdate(old)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.replicatedJobs[1].template.spec.completions: Invalid value: 6: completions must be equal to parallelism for Elastic Indexed Jobs", errs[0].Error())
}
