package childjobs_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func TestFirstSyncCreatesEveryChild(t *testing.T) {
	in := leaderWorkers(2)
	in.ChildManagedBy = "jobkit.io/job-controller"
	in.Spec.Coordinator = &plaingroup.Coordinator{ReplicatedJob: "leader"}
	p, err := childjobs.Compute(in)
	require.NoError(t, err)

	assert.Equal(t, []string{"js-leader-0", "js-workers-0", "js-workers-1"}, names(jobsOf(p.Create)))
	assert.Empty(t, p.Delete)
	assert.Empty(t, p.Events)
	assert.Empty(t, p.Warnings)

	got := p.Create[2].Job
	keys := map[string]string{
		"jobset.sigs.k8s.io/jobset-name":            "js",
		"jobset.sigs.k8s.io/jobset-uid":             "js-uid",
		"jobset.sigs.k8s.io/replicatedjob-name":     "workers",
		"jobset.sigs.k8s.io/replicatedjob-replicas": "2",
		"jobset.sigs.k8s.io/job-index":              "1",
		"jobset.sigs.k8s.io/job-global-index":       "2",
		"jobset.sigs.k8s.io/global-replicas":        "3",
		"jobset.sigs.k8s.io/group-name":             "default",
		"jobset.sigs.k8s.io/group-replicas":         "3",
		"jobset.sigs.k8s.io/job-group-index":        "2",
		"jobset.sigs.k8s.io/restart-attempt":        "0",
		"jobset.sigs.k8s.io/job-restart-attempt":    "0",
		// sha1("ns/js-workers-1"), computed independently.
		"jobset.sigs.k8s.io/job-key":     "517d70ff8ddeb6684a3a547e37602be566603129",
		"jobset.sigs.k8s.io/coordinator": "js-leader-0-0.js",
	}
	withApp := func(m map[string]string) map[string]string {
		out := map[string]string{"app": "train"}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	annotations := map[string]string{"alpha.jobset.sigs.k8s.io/namespaced-job": "ns_js-workers-1"}
	for k, v := range keys {
		annotations[k] = v
	}
	want := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: "js-workers-1", Namespace: "ns", Labels: withApp(keys), Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "js", UID: "js-uid",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2),
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Suspend:        ptr.To(false),
			ManagedBy:      ptr.To("jobkit.io/job-controller"),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: keys, Annotations: keys},
				Spec: corev1.PodSpec{
					Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Subdomain:     "js",
				},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("created child (-want +got):\n%s", diff)
	}
	assert.Equal(t, map[string]string{"app": "train"}, in.Templates[1].Labels, "the template is not modified")
	assert.Empty(t, in.Templates[1].Spec.Template.Spec.Subdomain, "the template is not modified")

	require.NotNil(t, p.Service)
	wantSvc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "js", Namespace: "ns", Labels: map[string]string{"jobset.sigs.k8s.io/jobset-name": "js"},
			OwnerReferences: want.OwnerReferences,
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"jobset.sigs.k8s.io/jobset-name": "js"},
			PublishNotReadyAddresses: true,
		},
	}
	if diff := cmp.Diff(wantSvc, p.Service); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}

	assert.True(t, p.StatusChanged)
	wantStatus := childjobs.Status{ReplicatedJobs: []plaingroup.RoleStatus{{Name: "leader"}, {Name: "workers"}}}
	if diff := cmp.Diff(wantStatus, p.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestNetworkOff(t *testing.T) {
	in := leaderWorkers(1)
	in.EnableDNSHostnames = ptr.To(false)
	p, err := childjobs.Compute(in)
	require.NoError(t, err)
	assert.Nil(t, p.Service)
	assert.Empty(t, p.Create[0].Job.Spec.Template.Spec.Subdomain)
	assert.Nil(t, p.Create[0].Job.Spec.ManagedBy, "no managedBy unless asked")

	in = leaderWorkers(1)
	in.Spec.Subdomain, in.PublishNotReadyAddresses, in.ServiceExists = "net", ptr.To(false), false
	p, err = childjobs.Compute(in)
	require.NoError(t, err)
	assert.Equal(t, "net", p.Service.Name)
	assert.False(t, p.Service.Spec.PublishNotReadyAddresses)
	assert.Equal(t, "net", p.Create[0].Job.Spec.Template.Spec.Subdomain)

	in.ServiceExists = true
	p, err = childjobs.Compute(in)
	require.NoError(t, err)
	assert.Nil(t, p.Service, "an existing Service is not created again")
}

func TestSteadySyncIsEmpty(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(3)}
	w.sync(t0)
	p := w.sync(t0.Add(time.Second))
	assert.True(t, p.IsEmpty(), "second sync:\n%s", p.String())
}

// restartGroup runs a group with a failure policy of maxRestarts 1 until a worker
// fails and returns the world after the restart's sync.
func restartGroup(t *testing.T, strategy plaingroup.RestartStrategy) (*world, childjobs.Plan) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 1, RestartStrategy: strategy}
	w.sync(t0)
	w.finish("js-workers-1", batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit", t0.Add(time.Minute))
	return w, w.sync(t0.Add(time.Minute))
}

func TestWorkerFailureRestartsTheGroup(t *testing.T) {
	w, p := restartGroup(t, plaingroup.Recreate)
	assert.Equal(t, []string{"js-leader-0", "js-workers-0", "js-workers-1"}, deleted(p))
	for _, d := range p.Delete {
		assert.Equal(t, metav1.DeletePropagationForeground, d.Propagation)
		assert.Contains(t, d.Reason, "obsolete: restart attempt 0, the group is at 1")
	}
	assert.Empty(t, p.Create, "Recreate waits for each old child to be gone")
	assert.Equal(t, int32(1), p.Status.Restarts)
	assert.Equal(t, int32(1), p.Status.RestartsCountTowardsMax)
	c := condition(p.Status, "RestartingJobSet")
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, "DefaultFailurePolicy", c.Reason)
	assert.Equal(t, int64(1), c.ObservedGeneration)
	assert.Equal(t, []string{"Warning/RestartJobSetFailurePolicyAction"}, eventReasons(p))
	assert.Contains(t, p.Events[0].Message, "js-workers-1")

	// The children go one by one: Recreate creates each index once its old
	// child is gone, with the new attempt.
	w.in.Children = w.in.Children[1:] // the leader is gone
	p = w.sync(t0.Add(2 * time.Minute))
	require.Equal(t, []string{"js-leader-0"}, names(jobsOf(p.Create)))
	assert.Equal(t, "1", p.Create[0].Job.Labels[plaingroup.LabelRestartAttempt])
	assert.Empty(t, p.Delete, "children already being deleted are not deleted again")

	w.gone()
	p = w.sync(t0.Add(3 * time.Minute))
	assert.Equal(t, []string{"js-workers-0", "js-workers-1"}, names(jobsOf(p.Create)))

	// Once every role has started again, the restart ends.
	for _, n := range []string{"js-leader-0", "js-workers-0", "js-workers-1"} {
		w.ready(n)
	}
	p = w.sync(t0.Add(4 * time.Minute))
	c = condition(p.Status, "RestartingJobSet")
	require.NotNil(t, c)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "JobsReady", c.Reason)
}

func TestBlockingRecreateWaitsForEveryOldChild(t *testing.T) {
	w, _ := restartGroup(t, plaingroup.BlockingRecreate)
	w.in.Children = w.in.Children[1:]
	p := w.sync(t0.Add(2 * time.Minute))
	assert.Empty(t, p.Create, "BlockingRecreate creates nothing while an old child exists")
	w.gone()
	p = w.sync(t0.Add(3 * time.Minute))
	assert.Equal(t, []string{"js-leader-0", "js-workers-0", "js-workers-1"}, names(jobsOf(p.Create)))
}

func TestMaxRestartsReachedFailsTheGroup(t *testing.T) {
	w, _ := restartGroup(t, plaingroup.Recreate)
	w.gone()
	w.sync(t0.Add(2 * time.Minute))
	w.finish("js-workers-0", batchv1.JobFailed, "BackoffLimitExceeded", "again", t0.Add(3*time.Minute))
	w.ready("js-leader-0")
	p := w.sync(t0.Add(3 * time.Minute))

	c := condition(p.Status, "Failed")
	require.NotNil(t, c)
	assert.Equal(t, "ReachedMaxRestarts", c.Reason)
	assert.Equal(t, "Failed", p.Status.TerminalState)
	assert.Equal(t, int32(1), p.Status.Restarts, "a failure does not count a restart")
	assert.Equal(t, []string{"js-leader-0", "js-workers-1"}, deleted(p), "the running children are stopped")
	for _, d := range p.Delete {
		assert.Equal(t, "the group failed (ReachedMaxRestarts)", d.Reason)
	}
	assert.Equal(t, []string{"Warning/ReachedMaxRestarts"}, eventReasons(p))
	assert.Empty(t, p.Create)
	assert.Equal(t, "JobSetFailed", condition(p.Status, "RestartingJobSet").Reason, "the failure ends the restart")

	// A failed group creates nothing more, even once its children are gone.
	w.gone()
	p = w.sync(t0.Add(4 * time.Minute))
	assert.Empty(t, p.Create)
	assert.Nil(t, p.Service)
}

func TestFailureRules(t *testing.T) {
	tests := []struct {
		name        string
		policy      *plaingroup.FailurePolicy
		reason      string
		wantFailed  string // the Failed reason, "" when the group does not fail
		wantRestart string // the RestartingJobSet reason
		wantDeleted []string
	}{
		{name: "no failure policy fails at once", reason: "BackoffLimitExceeded",
			wantFailed: "FailedJobs", wantDeleted: []string{"js-leader-0", "js-workers-0"}},
		{name: "FailJobSet on PodFailurePolicy", reason: "PodFailurePolicy",
			policy: &plaingroup.FailurePolicy{MaxRestarts: 5, Rules: []plaingroup.Rule{
				{Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}}},
			wantFailed: "FailJobSetFailurePolicyAction", wantDeleted: []string{"js-leader-0", "js-workers-0"}},
		{name: "a rule that does not match leaves the default", reason: "BackoffLimitExceeded",
			policy: &plaingroup.FailurePolicy{MaxRestarts: 5, Rules: []plaingroup.Rule{
				{Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}}},
			wantRestart: "DefaultFailurePolicy", wantDeleted: []string{"js-leader-0", "js-workers-0", "js-workers-1"}},
		{name: "a named restart rule", reason: "DeadlineExceeded",
			policy: &plaingroup.FailurePolicy{MaxRestarts: 0, Rules: []plaingroup.Rule{
				{Name: "deadline", Action: plaingroup.RestartJobSetAndIgnoreMaxRestarts, TargetReplicatedJobs: []string{"workers"}}}},
			wantRestart: "FailurePolicy_deadline", wantDeleted: []string{"js-leader-0", "js-workers-0", "js-workers-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{t: t, in: leaderWorkers(2)}
			w.in.Spec.FailurePolicy = tc.policy
			w.sync(t0)
			w.finish("js-workers-1", batchv1.JobFailed, tc.reason, "boom", t0.Add(time.Minute))
			p := w.sync(t0.Add(time.Minute))
			assert.Equal(t, tc.wantDeleted, deleted(p))
			if tc.wantFailed != "" {
				c := condition(p.Status, "Failed")
				require.NotNil(t, c, "Failed condition")
				assert.Equal(t, tc.wantFailed, c.Reason)
				assert.Equal(t, "Failed", p.Status.TerminalState)
				assert.Zero(t, p.Status.Restarts)
				return
			}
			assert.Nil(t, condition(p.Status, "Failed"))
			assert.Equal(t, tc.wantRestart, condition(p.Status, "RestartingJobSet").Reason)
			assert.Equal(t, int32(1), p.Status.Restarts)
		})
	}
}

func TestRestartJobRestartsOnlyThatChild(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 3, Rules: []plaingroup.Rule{
		{Name: "one", Action: plaingroup.RestartJob, TargetReplicatedJobs: []string{"workers"}}}}
	w.sync(t0)
	w.finish("js-workers-1", batchv1.JobFailed, "BackoffLimitExceeded", "boom", t0.Add(time.Minute))
	p := w.sync(t0.Add(time.Minute))

	assert.Equal(t, []string{"js-workers-1"}, deleted(p))
	assert.Contains(t, p.Delete[0].Reason, "obsolete: job restart attempt 0, index 1 of \"workers\" is at 1")
	assert.Zero(t, p.Status.Restarts, "RestartJob changes no group counter")
	assert.Nil(t, condition(p.Status, "RestartingJobSet"), "RestartJob sets no condition")
	assert.Equal(t, []int32{0, 1}, p.Status.ReplicatedJobs[1].JobRestarts)
	assert.Equal(t, []int32{0, 1}, p.Status.ReplicatedJobs[1].JobRestartsCountTowardsMax)
	assert.Equal(t, []string{"Warning/RestartJobFailurePolicyAction"}, eventReasons(p))

	w.gone()
	p = w.sync(t0.Add(2 * time.Minute))
	require.Equal(t, []string{"js-workers-1"}, names(jobsOf(p.Create)))
	assert.Equal(t, "1", p.Create[0].Job.Labels[plaingroup.LabelJobRestartAttempt])
	assert.Equal(t, "0", p.Create[0].Job.Labels[plaingroup.LabelRestartAttempt])
}

func TestSuccessAnyOnTheLeaderStopsTheRest(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.SuccessPolicy = &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"leader"}}
	w.sync(t0)
	w.finish("js-leader-0", batchv1.JobComplete, "CompletionsReached", "", t0.Add(time.Minute))
	p := w.sync(t0.Add(time.Minute))

	c := condition(p.Status, "Completed")
	require.NotNil(t, c)
	assert.Equal(t, "AllJobsCompleted", c.Reason)
	assert.Equal(t, "Completed", p.Status.TerminalState)
	assert.Equal(t, []string{"js-workers-0", "js-workers-1"}, deleted(p))
	assert.Equal(t, "the group completed (AllJobsCompleted): success stops the rest", p.Delete[0].Reason)
	assert.Equal(t, []string{"Normal/AllJobsCompleted"}, eventReasons(p))
	assert.Zero(t, p.RequeueAfter, "no TTL, no requeue")
}

func TestSuccessAllNeedsEveryChild(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.sync(t0)
	w.finish("js-leader-0", batchv1.JobComplete, "CompletionsReached", "", t0.Add(time.Minute))
	p := w.sync(t0.Add(time.Minute))
	assert.Nil(t, condition(p.Status, "Completed"))
	assert.Equal(t, int32(1), p.Status.ReplicatedJobs[0].Succeeded)
	w.finish("js-workers-0", batchv1.JobComplete, "CompletionsReached", "", t0.Add(2*time.Minute))
	p = w.sync(t0.Add(2 * time.Minute))
	assert.NotNil(t, condition(p.Status, "Completed"))
	assert.Empty(t, p.Delete, "nothing runs any more")
}

func TestDependsOnReadyHoldsTheWorkers(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.Roles[1].DependsOn = []plaingroup.Dependency{{Name: "leader", Status: plaingroup.DependsOnReady}}
	p := w.sync(t0)
	assert.Equal(t, []string{"js-leader-0"}, names(jobsOf(p.Create)), "the workers wait for the leader")
	p = w.sync(t0.Add(time.Second))
	assert.Empty(t, p.Create, "the leader is not ready yet")
	w.ready("js-leader-0")
	p = w.sync(t0.Add(2 * time.Second))
	assert.Equal(t, []string{"js-workers-0", "js-workers-1"}, names(jobsOf(p.Create)))
	assert.Equal(t, int32(1), p.Status.ReplicatedJobs[0].Ready)
}

func TestInOrderStartup(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.in.Spec.StartupOrder = plaingroup.InOrder
	p := w.sync(t0)
	assert.Equal(t, []string{"js-leader-0"}, names(jobsOf(p.Create)))
	assert.Equal(t, metav1.ConditionTrue, condition(p.Status, "StartupPolicyInProgress").Status)
	w.ready("js-leader-0")
	p = w.sync(t0.Add(time.Second))
	assert.Equal(t, []string{"js-workers-0"}, names(jobsOf(p.Create)))
	w.ready("js-workers-0")
	p = w.sync(t0.Add(2 * time.Second))
	assert.Equal(t, metav1.ConditionFalse, condition(p.Status, "StartupPolicyInProgress").Status)
	assert.Equal(t, metav1.ConditionTrue, condition(p.Status, "StartupPolicyCompleted").Status)
}

func TestSuspendAndResume(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.in.Suspend = true
	p := w.sync(t0)
	for _, a := range p.Create {
		assert.True(t, *a.Job.Spec.Suspend, "%s is created suspended", a.Job.Name)
	}
	assert.Equal(t, "SuspendedJobs", condition(p.Status, "Suspended").Reason)
	assert.Equal(t, []string{"Normal/SuspendedJobs"}, eventReasons(p))

	w.in.Suspend = false
	p = w.sync(t0.Add(time.Minute))
	assert.Equal(t, []string{"js-leader-0", "js-workers-0"}, names(jobsOf(p.Resume)))
	c := condition(p.Status, "Suspended")
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "ResumeJobs", c.Reason)
	assert.Equal(t, []string{"Normal/ResumeJobs"}, eventReasons(p))

	w.in.Suspend = true
	p = w.sync(t0.Add(2 * time.Minute))
	assert.Equal(t, []string{"js-leader-0", "js-workers-0"}, names(jobsOf(p.Suspend)))
	assert.Empty(t, p.Resume)
}

func TestResumeInOrderRoleByRole(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.in.Spec.StartupOrder = plaingroup.InOrder
	w.sync(t0)
	w.ready("js-leader-0")
	w.sync(t0.Add(time.Second)) // the workers are created
	w.in.Suspend = true
	w.sync(t0.Add(2 * time.Second))
	for _, j := range w.in.Children {
		j.Status.Ready, j.Status.Active = ptr.To[int32](0), 0
	}
	w.in.Suspend = false
	p := w.sync(t0.Add(3 * time.Second))
	assert.Equal(t, []string{"js-leader-0"}, names(jobsOf(p.Resume)), "InOrder resumes the leader first")
}

func TestTTLAfterFinished(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.in.Spec.TTLSecondsAfterFinished = ptr.To[int32](60)
	w.sync(t0)
	w.finish("js-leader-0", batchv1.JobComplete, "CompletionsReached", "", t0)
	w.finish("js-workers-0", batchv1.JobComplete, "CompletionsReached", "", t0)
	p := w.sync(t0.Add(10 * time.Second))
	require.NotNil(t, condition(p.Status, "Completed"))
	assert.Equal(t, 60*time.Second, p.RequeueAfter, "the TTL counts from the Completed condition")
	assert.Contains(t, p.RequeueReason, "ttlSecondsAfterFinished")

	p = w.sync(t0.Add(40 * time.Second))
	assert.Equal(t, 30*time.Second, p.RequeueAfter)
	assert.Empty(t, p.DeleteGroup)

	p = w.sync(t0.Add(70 * time.Second))
	assert.Equal(t, "ttlSecondsAfterFinished 60 expired at 2026-03-01T12:01:10Z", p.DeleteGroup)
	assert.False(t, p.StatusChanged)
	assert.Empty(t, p.Delete)
}

func TestTTLZeroWritesTheStatusFirst(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(1)}
	w.in.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	w.sync(t0)
	w.finish("js-leader-0", batchv1.JobComplete, "CompletionsReached", "", t0)
	w.finish("js-workers-0", batchv1.JobComplete, "CompletionsReached", "", t0)
	p := w.sync(t0.Add(time.Second))
	assert.True(t, p.StatusChanged)
	assert.Empty(t, p.DeleteGroup, "the terminal status is written before the group goes")
	assert.Equal(t, time.Nanosecond, p.RequeueAfter)
	p = w.sync(t0.Add(time.Second))
	assert.NotEmpty(t, p.DeleteGroup)
}

func TestDeletingGroupIsSkipped(t *testing.T) {
	in := leaderWorkers(1)
	in.Deleting = true
	p, err := childjobs.Compute(in)
	require.NoError(t, err)
	assert.Equal(t, childjobs.Plan{Skip: "the group is being deleted"}, p)
}

func TestManagedBy(t *testing.T) {
	tests := []struct {
		name, controller, managedBy string
		wantSkip                    bool
	}{
		{name: "no controller name handles every group", managedBy: "x.io/other"},
		{name: "named in managedBy", controller: "x.io/groups", managedBy: "x.io/groups"},
		{name: "another controller", controller: "x.io/groups", managedBy: "x.io/other", wantSkip: true},
		{name: "unset managedBy is JobSet's", controller: "x.io/groups", wantSkip: true},
		{name: "unset managedBy for JobSet's name", controller: plaingroup.ControllerName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := leaderWorkers(1)
			in.ControllerName, in.Spec.ManagedBy = tc.controller, tc.managedBy
			p, err := childjobs.Compute(in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantSkip, p.Skip != "", "Skip = %q", p.Skip)
			assert.Equal(t, tc.wantSkip, len(p.Create) == 0)
		})
	}
}

func TestForeignAndBadChildren(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.sync(t0)
	w.job("js-workers-0").OwnerReferences[0].UID = "other-uid"
	w.job("js-workers-1").Labels[plaingroup.LabelJobIndex] = "one"
	w.finish("js-workers-1", batchv1.JobFailed, "BackoffLimitExceeded", "", t0) // not counted
	p := w.sync(t0.Add(time.Second))

	require.Len(t, p.Warnings, 4)
	assert.Contains(t, p.Warnings[0], "ns/js-workers-0")
	assert.Contains(t, p.Warnings[0], "not controlled by the group")
	assert.Contains(t, p.Warnings[1], "metadata.labels[jobset.sigs.k8s.io/job-index]")
	assert.Contains(t, p.Warnings[1], "one")
	assert.Contains(t, p.Warnings[2], "child js-workers-0 not created")
	assert.Contains(t, p.Warnings[3], "child js-workers-1 not created")
	assert.Nil(t, condition(p.Status, "Failed"), "a child that cannot be read is not counted")
	assert.Empty(t, p.Delete)
	// Their indexes have no child the rules can see, but their names are taken.
	assert.Empty(t, p.Create)
	assert.Equal(t, int32(0), p.Status.ReplicatedJobs[1].Failed)
}

func TestComputeErrors(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(in *childjobs.Input)
		wantField string
	}{
		{name: "no name", edit: func(in *childjobs.Input) { in.Name = "" }, wantField: "Input.Name"},
		{name: "no owner kind", edit: func(in *childjobs.Input) { in.Owner.Kind = "" }, wantField: "Input.Owner"},
		{name: "another spec name", edit: func(in *childjobs.Input) { in.Spec.Name = "other" }, wantField: "Input.Spec.Name"},
		{name: "templates short", edit: func(in *childjobs.Input) { in.Templates = in.Templates[:1] }, wantField: "Input.Templates"},
		{name: "bad pattern", edit: func(in *childjobs.Input) {
			in.Spec.FailurePolicy = &plaingroup.FailurePolicy{Rules: []plaingroup.Rule{{Action: plaingroup.FailJobSet, OnJobFailureMessagePatterns: []string{"("}}}}
		}, wantField: "failurePolicy.rules[0].onJobFailureMessagePatterns[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := leaderWorkers(1)
			tc.edit(in)
			p, err := childjobs.Compute(in)
			var fe *fielderr.Error
			require.True(t, errors.As(err, &fe), "Compute error = %v, want a *fielderr.Error", err)
			assert.Equal(t, tc.wantField, fe.Field)
			assert.True(t, p.IsEmpty())
		})
	}
}

func TestComputeDoesNotModifyItsInput(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.FailurePolicy = &plaingroup.FailurePolicy{MaxRestarts: 2, Rules: []plaingroup.Rule{{Action: plaingroup.RestartJob}}}
	w.sync(t0)
	w.finish("js-workers-1", batchv1.JobFailed, "BackoffLimitExceeded", "", t0)
	// Per-index counters in the status, which the RestartJob must not bump in place.
	w.in.Status.ReplicatedJobs[1].JobRestarts = []int32{0, 0}
	w.in.Status.ReplicatedJobs[1].JobRestartsCountTowardsMax = []int32{0, 0}
	// A deep copy: a shallow one would share the slices Compute must not touch.
	before := w.in.Status
	before.Conditions = slices.Clone(before.Conditions)
	before.ReplicatedJobs = slices.Clone(before.ReplicatedJobs)
	for i := range before.ReplicatedJobs {
		r := &before.ReplicatedJobs[i]
		r.JobRestarts, r.JobRestartsCountTowardsMax = slices.Clone(r.JobRestarts), slices.Clone(r.JobRestartsCountTowardsMax)
	}
	templates := make([]batchv1.JobTemplateSpec, len(w.in.Templates))
	for i := range templates {
		templates[i] = *w.in.Templates[i].DeepCopy()
	}
	children := make([]batchv1.Job, len(w.in.Children))
	for i, j := range w.in.Children {
		children[i] = *j.DeepCopy()
	}
	spec := w.in.Spec
	spec.Roles = slices.Clone(spec.Roles)
	p, err := childjobs.Compute(w.in)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1}, p.Status.ReplicatedJobs[1].JobRestarts, "the restart is in the plan")
	assert.Equal(t, before, w.in.Status)
	assert.Equal(t, spec, w.in.Spec)
	assert.Equal(t, templates, w.in.Templates)
	for i, j := range w.in.Children {
		if diff := cmp.Diff(&children[i], j); diff != "" {
			t.Errorf("child %s modified (-before +after):\n%s", j.Name, diff)
		}
	}
}

// A controller that crashed after writing the restart's status, before deleting
// anything, finds the children of the old attempt obsolete: it deletes them and
// counts nothing again.
func TestRestartResumedAfterACrash(t *testing.T) {
	w, p := restartGroup(t, plaingroup.Recreate)
	written := p.Status
	for _, j := range w.in.Children {
		j.DeletionTimestamp = nil // the deletions never happened
	}
	w.in.Status = written
	p = w.sync(t0.Add(2 * time.Minute))
	assert.Equal(t, []string{"js-leader-0", "js-workers-0", "js-workers-1"}, deleted(p))
	assert.Equal(t, int32(1), p.Status.Restarts, "the restart is counted once")
	assert.Empty(t, p.Events, "no second decision")
	assert.False(t, p.StatusChanged)
	assert.Empty(t, p.Create)
}

// A failed child of an old attempt decides nothing: only the current attempt's
// failures count.
func TestOldAttemptFailureIsIgnored(t *testing.T) {
	w, _ := restartGroup(t, plaingroup.Recreate)
	w.gone()
	w.sync(t0.Add(2 * time.Minute)) // the new attempt
	old := w.job("js-workers-0").DeepCopy()
	old.Name = "js-workers-9" // an old child, still there
	old.Labels[plaingroup.LabelRestartAttempt] = "0"
	old.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: metav1.NewTime(t0)}}
	old.DeletionTimestamp = &metav1.Time{Time: t0}
	w.in.Children = append(w.in.Children, old)
	p := w.sync(t0.Add(3 * time.Minute))
	assert.Equal(t, int32(1), p.Status.Restarts)
	assert.Nil(t, condition(p.Status, "Failed"))
	assert.Empty(t, p.Delete, "it is already being deleted")
}

func TestUnchangedConditionsKeepTheirGeneration(t *testing.T) {
	w, _ := restartGroup(t, plaingroup.Recreate)
	w.in.Generation = 7
	w.gone()
	p := w.sync(t0.Add(2 * time.Minute))
	c := condition(p.Status, "RestartingJobSet")
	require.NotNil(t, c)
	assert.Equal(t, int64(1), c.ObservedGeneration, "an unchanged condition is kept as written")
	assert.True(t, c.LastTransitionTime.Equal(&metav1.Time{Time: t0.Add(time.Minute)}))
}

func TestNoCoordinatorNoLabel(t *testing.T) {
	p, err := childjobs.Compute(leaderWorkers(1))
	require.NoError(t, err)
	_, has := p.Create[0].Job.Labels["jobset.sigs.k8s.io/coordinator"]
	assert.False(t, has)
	assert.Equal(t, "ns_js-leader-0", p.Create[0].Job.Annotations[plaingroup.AnnotationNamespacedJob])
}

func TestSuspendedWhileRestarting(t *testing.T) {
	w, _ := restartGroup(t, plaingroup.Recreate)
	w.in.Suspend = true
	p := w.sync(t0.Add(2 * time.Minute))
	c := condition(p.Status, "RestartingJobSet")
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, "JobSetSuspended", c.Reason)
	assert.Empty(t, p.Suspend, "children being deleted are not suspended")
}

// A suspended group under InOrder creates every role's children at once,
// suspended, with no startup condition yet; resumed, it starts the roles one
// after another (JobSet's "startupPolicy with InOrder; resume suspended
// JobSet").
func TestSuspendedInOrderCreatesEveryRole(t *testing.T) {
	w := &world{t: t, in: leaderWorkers(2)}
	w.in.Spec.StartupOrder = plaingroup.InOrder
	w.in.Suspend = true
	p := w.sync(t0)
	assert.Equal(t, []string{"js-leader-0", "js-workers-0", "js-workers-1"}, names(jobsOf(p.Create)))
	for _, a := range p.Create {
		assert.True(t, *a.Job.Spec.Suspend, "%s is created suspended", a.Job.Name)
	}
	assert.Nil(t, condition(p.Status, "StartupPolicyInProgress"), "no startup condition while suspended")
	assert.Nil(t, condition(p.Status, "StartupPolicyCompleted"), "no startup condition while suspended")

	w.in.Suspend = false
	p = w.sync(t0.Add(time.Second))
	assert.Equal(t, []string{"js-leader-0"}, names(jobsOf(p.Resume)), "the leader is resumed first")
	assert.Empty(t, p.Create)
	assert.Equal(t, metav1.ConditionTrue, condition(p.Status, "StartupPolicyInProgress").Status)
	w.ready("js-leader-0")
	p = w.sync(t0.Add(2 * time.Second))
	assert.Equal(t, []string{"js-workers-0", "js-workers-1"}, names(jobsOf(p.Resume)))
}
