package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func succeedAll(*corev1.Pod) scenarios.Outcome { return scenarios.Succeed() }

// A leader and two workers of two pods run to completion: every child
// succeeds, the JobSet completes with no restart, and the API writes of the
// run are counted (docs/performance.md's figures).
func TestLeaderAndWorkersComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(succeedAll)
	e.create(e.jobSet("run", role("leader", 1, 1), role("workers", 2, 2)))
	js := e.waitFinished("run")
	if js.Status.TerminalState != v1alpha2.Completed || condition(js, "Completed") == nil || js.Status.Restarts != 0 {
		t.Fatalf("status = %+v, want Completed with no restart", js.Status)
	}
	want := []v1alpha2.ReplicatedJobStatus{{Name: "leader", Succeeded: 1}, {Name: "workers", Succeeded: 2}}
	if got := js.Status.ReplicatedJobsStatus; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("replicatedJobsStatus = %+v, want %+v", got, want)
	}
	for _, ev := range e.events() {
		if ev.attempt != "0" {
			t.Errorf("Job %s of restart attempt %q, want 0", ev.name, ev.attempt)
		}
	}
	poll.Consistently(e.t, "no more writes once finished", func() (bool, string) { return true, "" })
	jsWrites, jsTotal := e.jobSetWrites.summary()
	jobWrites, jobTotal := e.jobWrites.summary()
	t.Logf("API writes of one run (a leader and 2 workers of 2 pods; 3 Jobs, 5 pods): JobSet controller %d (%s); Job controller %d (%s)",
		jsTotal, jsWrites, jobTotal, jobWrites)
}

// failing returns a policy under which the pods of child role-index of group
// restart attempt 0 fail with code, the other pods of attempt 0 keep running,
// and the pods of later attempts succeed.
func failing(role, index string, code int32) func(*corev1.Pod) scenarios.Outcome {
	return func(p *corev1.Pod) scenarios.Outcome {
		switch {
		case podAttempt(p) != "0":
			return scenarios.Succeed()
		case podRole(p) == role && podIndex(p) == index:
			return scenarios.FailWith(code)
		}
		return scenarios.Outcome{}
	}
}

// attempts returns the restart-attempt label of each Job of the namespace that
// is not being deleted, by name.
func (e *env) attempts() map[string]string {
	out := map[string]string{}
	for name, j := range e.jobs() {
		if j.DeletionTimestamp == nil {
			out[name] = j.Labels[plaingroup.LabelRestartAttempt]
		}
	}
	return out
}

// A worker's failure restarts the whole group (BlockingRecreate): every child
// of the old attempt is gone before the first of the new one is created, the
// counters say one restart that counts, and the second attempt completes.
func TestWorkerFailureRestartsTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(failing("workers", "1", 1))
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 2))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 2, RestartStrategy: v1alpha2.BlockingRecreate}
	e.create(js)
	got := e.waitFinished("run")
	if got.Status.TerminalState != v1alpha2.Completed || got.Status.Restarts != 1 || got.Status.RestartsCountTowardsMax != 1 {
		t.Fatalf("status = %+v, want Completed after 1 restart counting towards the maximum", got.Status)
	}
	if c := condition(got, plaingroup.ConditionRestarting); c == nil {
		t.Errorf("no %s condition in %+v", plaingroup.ConditionRestarting, got.Status.Conditions)
	}
	old := map[string]bool{}
	for _, ev := range e.events() {
		switch {
		case ev.attempt == "0" && ev.typ == watch.Added:
			old[ev.name] = true
		case ev.attempt == "0" && ev.typ == watch.Deleted:
			delete(old, ev.name)
		case ev.attempt == "1" && ev.typ == watch.Added && len(old) > 0:
			t.Fatalf("Job %s of attempt 1 created while Jobs of attempt 0 existed: %v", ev.name, old)
		}
	}
	if got, want := e.attempts(), map[string]string{"run-leader-0": "1", "run-workers-0": "1", "run-workers-1": "1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Jobs by restart attempt = %v, want %v", got, want)
	}
	jsWrites, jsTotal := e.jobSetWrites.summary()
	jobWrites, jobTotal := e.jobWrites.summary()
	t.Logf("API writes of one run with a group restart (3 Jobs, 5 pods per attempt): JobSet controller %d (%s); Job controller %d (%s)",
		jsTotal, jsWrites, jobTotal, jobWrites)
}

// A child failing again and again fails the group once maxRestarts restarts
// have been made: ReachedMaxRestarts.
func TestMaxRestartsFailsTheGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(func(p *corev1.Pod) scenarios.Outcome {
		if podRole(p) == "workers" && podIndex(p) == "0" {
			return scenarios.FailWith(1)
		}
		return scenarios.Outcome{}
	})
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 1}
	e.create(js)
	got := e.waitFinished("run")
	c := condition(got, plaingroup.ConditionFailed)
	if got.Status.TerminalState != v1alpha2.Failed || c == nil || c.Reason != "ReachedMaxRestarts" || got.Status.Restarts != 1 || got.Status.RestartsCountTowardsMax != 1 {
		t.Fatalf("status = %+v, want Failed (ReachedMaxRestarts) after 1 restart", got.Status)
	}
	poll.Eventually(e.t, "the running children deleted", func() (bool, string) {
		a := e.attempts()
		return len(a) <= 1, fmt.Sprint(a) // the failed child may stay
	})
}

// A FailJobSet rule on the leader, failed by its pod failure policy
// (PodFailurePolicy: exit code 42 fails the Job), fails the group at once,
// whatever maxRestarts allows.
func TestFailJobSetRuleOnPodFailurePolicy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(func(p *corev1.Pod) scenarios.Outcome {
		if podRole(p) == "leader" {
			return scenarios.FailWith(42)
		}
		return scenarios.Outcome{}
	})
	leader := role("leader", 1, 1)
	leader.Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	leader.Template.Spec.BackoffLimit = ptr.To[int32](3)
	js := e.jobSet("run", leader, role("workers", 2, 1))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 3, Rules: []v1alpha2.FailurePolicyRule{{
		Name: "leaderFailed", Action: v1alpha2.FailJobSet,
		OnJobFailureReasons: []string{batchv1.JobReasonPodFailurePolicy}, TargetReplicatedJobs: []string{"leader"},
	}}}
	e.create(js)
	got := e.waitFinished("run")
	c := condition(got, plaingroup.ConditionFailed)
	if got.Status.TerminalState != v1alpha2.Failed || c == nil || c.Reason != "FailJobSetFailurePolicyAction" || got.Status.Restarts != 0 {
		t.Fatalf("status = %+v, want Failed (FailJobSetFailurePolicyAction) with no restart", got.Status)
	}
	for _, ev := range e.events() {
		if ev.attempt != "0" {
			t.Errorf("Job %s of restart attempt %s: the group restarted", ev.name, ev.attempt)
		}
	}
}

// A RestartJob rule restarts only the failed child: its per-index counters
// move, the group's do not, and the other children keep their Jobs.
func TestRestartJobRestartsOnlyThatChild(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(func(p *corev1.Pod) scenarios.Outcome {
		if podRole(p) == "workers" && podIndex(p) == "1" && p.Labels[plaingroup.LabelJobRestartAttempt] == "0" {
			return scenarios.FailWith(1)
		}
		return scenarios.Succeed()
	})
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 2, Rules: []v1alpha2.FailurePolicyRule{{
		Name: "workerAlone", Action: v1alpha2.RestartJob, TargetReplicatedJobs: []string{"workers"},
	}}}
	e.create(js)
	got := e.waitFinished("run")
	if got.Status.TerminalState != v1alpha2.Completed || got.Status.Restarts != 0 || got.Status.RestartsCountTowardsMax != 0 {
		t.Fatalf("status = %+v, want Completed with no group restart", got.Status)
	}
	w := got.Status.ReplicatedJobsStatus[1]
	if fmt.Sprint(w.JobRestarts) != "[0 1]" || fmt.Sprint(w.JobRestartsCountTowardsMax) != "[0 1]" {
		t.Errorf("workers' jobRestarts = %v, countTowardsMax = %v, want [0 1] and [0 1]", w.JobRestarts, w.JobRestartsCountTowardsMax)
	}
	uids := map[string]map[types.UID]bool{}
	for _, ev := range e.events() {
		if uids[ev.name] == nil {
			uids[ev.name] = map[types.UID]bool{}
		}
		uids[ev.name][ev.uid] = true
	}
	for name, want := range map[string]int{"run-leader-0": 1, "run-workers-0": 1, "run-workers-1": 2} {
		if len(uids[name]) != want {
			t.Errorf("Job %s had %d UIDs, want %d", name, len(uids[name]), want)
		}
	}
}

// Success Any on the leader: the leader's success completes the group and the
// workers, still running, are deleted.
func TestSuccessAnyOnLeaderStopsTheRest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(func(p *corev1.Pod) scenarios.Outcome {
		if podRole(p) == "leader" {
			return scenarios.Succeed()
		}
		return scenarios.Outcome{}
	})
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.SuccessPolicy = &v1alpha2.SuccessPolicy{Operator: v1alpha2.OperatorAny, TargetReplicatedJobs: []string{"leader"}}
	e.create(js)
	got := e.waitFinished("run")
	if c := condition(got, plaingroup.ConditionCompleted); got.Status.TerminalState != v1alpha2.Completed || c == nil || c.Reason != "AllJobsCompleted" {
		t.Fatalf("status = %+v, want Completed (AllJobsCompleted)", got.Status)
	}
	poll.Eventually(e.t, "the workers deleted", func() (bool, string) {
		a := e.attempts()
		_, leader := a["run-leader-0"]
		return len(a) == 1 && leader, fmt.Sprint(a)
	})
}

// dependsOn Ready holds the workers until the leader is ready: with the
// kubelet stopped the leader's pod stays Pending and no worker Job is created;
// once it runs (and is ready) the workers come.
func TestDependsOnReadyHoldsWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	e.setPolicy(func(p *corev1.Pod) scenarios.Outcome { return scenarios.Outcome{} })
	workers := role("workers", 2, 1)
	workers.DependsOn = []v1alpha2.DependsOn{{Name: "leader", Status: v1alpha2.DependsOnReady}}
	e.create(e.jobSet("run", role("leader", 1, 1), workers))
	poll.Eventually(e.t, "the leader's Job", func() (bool, string) {
		_, ok := e.jobs()["run-leader-0"]
		return ok, fmt.Sprint(e.attempts())
	})
	poll.Consistently(e.t, "no worker before the leader is ready", func() (bool, string) {
		a := e.attempts()
		return len(a) == 1, fmt.Sprint(a)
	})
	e.startKubelet()
	poll.Eventually(e.t, "the workers' Jobs", func() (bool, string) {
		a := e.attempts()
		return len(a) == 3, fmt.Sprint(a)
	})
	leaderReady := false
	for _, ev := range e.events() {
		switch {
		case ev.name == "run-leader-0" && ev.ready:
			leaderReady = true
		case ev.role == "workers" && ev.typ == watch.Added && !leaderReady:
			t.Fatalf("worker Job %s created before the leader's Job was ready", ev.name)
		}
	}
	e.setPolicy(succeedAll)
	if got := e.waitFinished("run"); got.Status.TerminalState != v1alpha2.Completed {
		t.Fatalf("status = %+v, want Completed", got.Status)
	}
}

// A suspended JobSet creates its children suspended, and no pod runs; resumed,
// its children resume and it completes.
func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(succeedAll)
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.Suspend = ptr.To(true)
	e.create(js)
	poll.Eventually(e.t, "suspended children", func() (bool, string) {
		jobs := e.jobs()
		n := 0
		for _, j := range jobs {
			if ptr.Deref(j.Spec.Suspend, false) {
				n++
			}
		}
		c := condition(e.get("run"), plaingroup.ConditionSuspended)
		return n == 3 && c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%d suspended Jobs, condition %+v", n, c)
	})
	poll.Consistently(e.t, "no pod while suspended", func() (bool, string) {
		var pods corev1.PodList
		if err := k8s.List(t.Context(), &pods, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0, fmt.Sprintf("%d pods", len(pods.Items))
	})
	cur := e.get("run")
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Suspend = ptr.To(false)
	if err := k8s.Patch(t.Context(), cur, patch); err != nil {
		t.Fatalf("resuming: %v", err)
	}
	got := e.waitFinished("run")
	if c := condition(got, plaingroup.ConditionSuspended); got.Status.TerminalState != v1alpha2.Completed || c == nil || c.Status != metav1.ConditionFalse {
		t.Fatalf("status = %+v, want Completed and Suspended=False", got.Status)
	}
}

// ttlSecondsAfterFinished deletes the finished JobSet, and with it (foreground)
// its children.
func TestTTLDeletesTheJobSet(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.setPolicy(succeedAll)
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 1, 1))
	js.Spec.TTLSecondsAfterFinished = ptr.To[int32](1)
	e.create(js)
	e.waitFinished("run")
	poll.Eventually(e.t, "the JobSet and its children gone", func() (bool, string) {
		err := k8s.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "run"}, &v1alpha2.JobSet{})
		jobs := e.jobs()
		return apierrors.IsNotFound(err) && len(jobs) == 0, fmt.Sprintf("get: %v, %d Jobs", err, len(jobs))
	})
}

// The controller dies right after writing a restart (status.restarts 1) and
// before deleting any child of the old attempt; a new controller finishes the
// restart: one restart, no child of attempt 0 left, completed.
func TestControllerRestartedInTheMiddleOfARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	crashed := make(chan struct{})
	e.jobSetWrites.crash = func(verb, resource string, body []byte) bool {
		if verb == "update" && resource == "jobsets/status" && statusRestarts(body) == 1 {
			close(crashed)
			return true
		}
		return false
	}
	e.setPolicy(failing("workers", "1", 1))
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{MaxRestarts: 3}
	e.create(js)
	select {
	case <-crashed:
	case <-time.After(waitTimeout):
		t.Fatal("no restart was written")
	}
	e.stopJobSetController()
	if a := e.attempts(); fmt.Sprint(a) != "map[run-leader-0:0 run-workers-0:0 run-workers-1:0]" {
		t.Fatalf("after the crash, Jobs by attempt = %v, want the three of attempt 0", a)
	}
	if s := e.get("run").Status; s.Restarts != 1 {
		t.Fatalf("after the crash, status = %+v, want restarts 1", s)
	}
	e.startJobSetController(newAPIWrites())
	got := e.waitFinished("run")
	if got.Status.TerminalState != v1alpha2.Completed || got.Status.Restarts != 1 || got.Status.RestartsCountTowardsMax != 1 {
		t.Fatalf("status = %+v, want Completed after exactly 1 restart", got.Status)
	}
	if got, want := e.attempts(), map[string]string{"run-leader-0": "1", "run-workers-0": "1", "run-workers-1": "1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Jobs by restart attempt = %v, want %v", got, want)
	}
}

// A JobSet that plain/group's Validate refuses (a failure policy rule naming a
// role the JobSet lacks, which the CRD's schema cannot see) gets no child: it
// fails with reason InvalidJobSet and a Warning event naming the field; then
// its TTL after finishing deletes it.
func TestInvalidJobSetFailsWithoutChildren(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	js := e.jobSet("bad", role("leader", 1, 1))
	js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{
		Name: "r", Action: v1alpha2.FailJobSet, TargetReplicatedJobs: []string{"nope"},
	}}}
	js.Spec.TTLSecondsAfterFinished = ptr.To[int32](2)
	e.create(js)
	got := e.waitFinished("bad")
	c := condition(got, plaingroup.ConditionFailed)
	if got.Status.TerminalState != v1alpha2.Failed || c == nil || c.Reason != controller.ReasonInvalid ||
		!strings.Contains(c.Message, "failurePolicy.rules[0].targetReplicatedJobs[0]") || !strings.Contains(c.Message, "nope") {
		t.Fatalf("status = %+v, want Failed (%s) naming the field and value", got.Status, controller.ReasonInvalid)
	}
	poll.Eventually(e.t, "a Warning event", func() (bool, string) {
		var evs eventsv1.EventList
		if err := k8s.List(t.Context(), &evs, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		for _, ev := range evs.Items {
			if ev.Reason == controller.ReasonInvalid && ev.Type == corev1.EventTypeWarning && ev.Regarding.Name == "bad" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	poll.Consistently(e.t, "no child", func() (bool, string) {
		jobs := e.jobs()
		return len(jobs) == 0, fmt.Sprintf("%d Jobs", len(jobs))
	})
	poll.Eventually(e.t, "the invalid JobSet deleted by its TTL", func() (bool, string) {
		err := k8s.Get(t.Context(), types.NamespacedName{Namespace: e.ns, Name: "bad"}, &v1alpha2.JobSet{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
}

// startupPolicy InOrder starts the roles one at a time: the workers wait for
// the leader to have started (ready), with StartupPolicyInProgress meanwhile
// and StartupPolicyCompleted once every role has.
func TestInOrderStartup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	js := e.jobSet("run", role("leader", 1, 1), role("workers", 2, 1))
	js.Spec.StartupPolicy = &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.InOrder}
	e.create(js)
	poll.Eventually(e.t, "the leader's Job and StartupPolicyInProgress", func() (bool, string) {
		c := condition(e.get("run"), plaingroup.ConditionStartupPolicyInProgress)
		a := e.attempts()
		return len(a) == 1 && c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("Jobs %v, condition %+v", a, c)
	})
	poll.Consistently(e.t, "the workers wait for the leader", func() (bool, string) {
		a := e.attempts()
		return len(a) == 1, fmt.Sprint(a)
	})
	e.startKubelet()
	poll.Eventually(e.t, "every role started", func() (bool, string) {
		got := e.get("run")
		c := condition(got, plaingroup.ConditionStartupPolicyCompleted)
		return len(e.attempts()) == 3 && c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("conditions %+v", got.Status.Conditions)
	})
	if c := condition(e.get("run"), plaingroup.ConditionStartupPolicyInProgress); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("StartupPolicyInProgress = %+v once every role started, want False", c)
	}
	e.setPolicy(succeedAll)
	if got := e.waitFinished("run"); got.Status.TerminalState != v1alpha2.Completed {
		t.Fatalf("status = %+v, want Completed", got.Status)
	}
}
