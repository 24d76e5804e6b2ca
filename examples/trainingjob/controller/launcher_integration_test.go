package controller_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/internal/scenarios"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The runs with a launcher: two roles under one TrainingJob, synced by
// reconcile.SyncRoles through the one jkcr.Setup.

// newLauncherTJ returns a run of workers workers and one launcher, restarted up to
// maxRestarts times.
func (e *env) newLauncherTJ(name string, workers, maxRestarts int32) *v1alpha1.TrainingJob {
	tj := e.newTJ(name, workers)
	tj.Spec.MaxRestarts = ptr.To(maxRestarts)
	tj.Spec.Launcher = &v1alpha1.Launcher{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "launcher", Image: "registry.example/launcher:1"}},
	}}}
	return tj
}

func roleOf(p *corev1.Pod) string { return p.Labels[plaingroup.LabelRoleName] }

func attemptOf(p *corev1.Pod) string { return p.Labels[plaingroup.LabelRestartAttempt] }

// rolePolicy makes the kubelet end each pod as decide says from its role, its
// index and its attempt (the zero Outcome: it keeps running).
func (e *env) rolePolicy(decide func(role, index, attempt string) scenarios.Outcome) {
	e.kubelet.SetPolicy(func(p *corev1.Pod) scenarios.Outcome { return decide(roleOf(p), index(p), attemptOf(p)) })
}

// watchRun polls the run and its pods until the test ends and fails the test if a
// total of the status decreases, or if a pod of an attempt exists beside a pod of
// an older one (BlockingRecreate: every pod of the old attempt is gone before one
// of the new is created). It returns every pod it saw, by UID: role/attempt.
func (e *env) watchRun(name string) func() map[string]string {
	var mu sync.Mutex
	seen := map[string]string{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last [5]int32
		for ctx.Err() == nil {
			time.Sleep(envtesting.DefaultEvery)
			tj := &v1alpha1.TrainingJob{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, tj); err != nil {
				continue
			}
			st := &tj.Status
			cur := [5]int32{st.Restarts, roleTotal(st.Workers, true), roleTotal(st.Workers, false), roleTotal(st.Launcher, true), roleTotal(st.Launcher, false)}
			for i := range cur {
				if cur[i] < last[i] {
					e.t.Errorf("status total %d went from %d to %d (restarts, workers succeeded/failed, launcher succeeded/failed: %v then %v)", i, last[i], cur[i], last, cur)
				}
			}
			last = cur
			var list corev1.PodList
			if err := k8s.List(ctx, &list, client.InNamespace(e.ns)); err != nil {
				continue
			}
			attempts := map[string]bool{}
			mu.Lock()
			for i := range list.Items {
				p := &list.Items[i]
				seen[string(p.UID)] = roleOf(p) + "/" + attemptOf(p)
				attempts[attemptOf(p)] = true
			}
			mu.Unlock()
			if len(attempts) > 1 {
				e.t.Errorf("pods of attempts %v exist at once:%s", attempts, describePods(e.podsIn(&list)))
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]string, len(seen))
		for k, v := range seen {
			out[k] = v
		}
		return out
	}
}

func roleTotal(r *v1alpha1.RoleStatus, succeeded bool) int32 {
	switch {
	case r == nil:
		return 0
	case succeeded:
		return r.Succeeded
	default:
		return r.Failed
	}
}

func (e *env) podsIn(list *corev1.PodList) []*corev1.Pod {
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out
}

// groupCondition returns the group condition typ of tj as "True/Reason", or "".
func groupCondition(tj *v1alpha1.TrainingJob, typ string) string {
	for _, c := range tj.Status.GroupConditions {
		if c.Type == typ {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// checkLauncherDone checks what holds after every run with a launcher: no pod
// runs or keeps the tracking finalizer (the finished ones stay, as a Job's);
// nothing uncounted in either role; every status write accepted.
func (e *env) checkLauncherDone(tj *v1alpha1.TrainingJob) {
	e.t.Helper()
	for _, r := range []*v1alpha1.RoleStatus{tj.Status.Workers, tj.Status.Launcher} {
		if r == nil {
			continue
		}
		if u := r.Current.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
			e.t.Errorf("uncountedTerminatedPods = %+v after the run finished", *u)
		}
	}
	poll.Eventually(e.t, "no pod runs or keeps the tracking finalizer", func() (bool, string) {
		pods := e.pods()
		finished := func(p *corev1.Pod) bool {
			return p.DeletionTimestamp == nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
		}
		return count(pods, tracked) == 0 && count(pods, finished) == len(pods), describePods(pods) + "\nsyncs:" + e.lastSyncs()
	})
	e.checkWrites()
}

// (l1) Two workers and a launcher: the launcher is created once the workers are
// Ready and succeeds; the run is Completed, the workers are stopped (not counted
// as failures), no pod is left.
func TestLauncherRunCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rolePolicy(func(role, _, _ string) scenarios.Outcome {
		if role == controller.RoleLauncher {
			return scenarios.Succeed()
		}
		return scenarios.Outcome{}
	})
	e.create(e.newLauncherTJ("run", 2, 0))
	seen := e.watchRun("run")
	got := e.waitFinished("run")
	if c := groupCondition(got, plaingroup.ConditionCompleted); !strings.HasPrefix(c, "True") || got.Status.TerminalState != "Completed" {
		t.Errorf("group condition Completed %q, terminalState %q, want True and Completed", c, got.Status.TerminalState)
	}
	if l, w := got.Status.Launcher, got.Status.Workers; l == nil || w == nil || l.Succeeded != 1 || l.Failed != 0 || w.Failed != 0 {
		t.Errorf("launcher %+v, workers %+v: want the launcher succeeded once, nothing failed", l, w)
	}
	if got.Status.Restarts != 0 {
		t.Errorf("restarts = %d, want 0", got.Status.Restarts)
	}
	e.checkLauncherDone(got)
	byRole := map[string]int{}
	for _, v := range seen() {
		byRole[v]++
	}
	if byRole["workers/0"] != 2 || byRole["launcher/0"] != 1 || len(byRole) != 2 {
		t.Errorf("pods seen by role/attempt %v, want 2 workers and 1 launcher of attempt 0", byRole)
	}
	e.checkLauncherAfterWorkersReady()
}

// checkLauncherAfterWorkersReady checks from the events that the launcher pod was
// created after every worker of its attempt (dependsOn Ready): the order of the
// SuccessfulCreate events on the run.
func (e *env) checkLauncherAfterWorkersReady() {
	e.t.Helper()
	list, err := clientset.EventsV1().Events(e.ns).List(e.t.Context(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var workers, launcher []time.Time
	for _, ev := range list.Items {
		if ev.Reason != "SuccessfulCreate" {
			continue
		}
		at := ev.EventTime.Time
		if at.IsZero() {
			at = ev.CreationTimestamp.Time
		}
		switch {
		case strings.Contains(ev.Note, "-"+controller.RoleLauncher+"-"):
			launcher = append(launcher, at)
		case strings.Contains(ev.Note, "-"+controller.RoleWorkers+"-"):
			workers = append(workers, at)
		}
	}
	if len(launcher) == 0 || len(workers) == 0 {
		e.t.Errorf("SuccessfulCreate events: %d of workers, %d of the launcher, want both", len(workers), len(launcher))
		return
	}
	for _, w := range workers {
		if w.After(launcher[0]) {
			e.t.Errorf("a worker was created at %v, after the launcher (%v)", w, launcher[0])
		}
	}
}

// (l2) Worker 1 of attempt 0 fails (no retry): the whole group restarts once;
// every pod of attempt 0 is gone before one of attempt 1 exists, the pods of
// attempt 1 carry the attempt label 1, the launcher of attempt 1 succeeds. The
// workers count 2 failures, both of attempt 0 (the failed worker, and the other
// one, which the role's failure terminates, as a failed Job's active pods); the
// pods stopped by the restart (the launcher of attempt 0) or by the success (the
// workers of attempt 1) count nothing, and no total ever decreases.
func TestLauncherWorkerFailureRestartsGroup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rolePolicy(restartOnce)
	e.create(e.newLauncherTJ("restart", 2, 1))
	seen := e.watchRun("restart")
	got := e.waitFinished("restart")
	e.checkRestartedOnce(got, seen())
}

// restartOnce fails worker 1 of attempt 0 once the launcher of attempt 0 runs,
// and lets the launcher of attempt 1 succeed.
func restartOnce(role, index, attempt string) scenarios.Outcome {
	switch {
	case attempt == "0" && role == controller.RoleWorkers && index == "1":
		return scenarios.FailWith(1)
	case attempt == "1" && role == controller.RoleLauncher:
		return scenarios.Succeed()
	}
	return scenarios.Outcome{}
}

func (e *env) checkRestartedOnce(got *v1alpha1.TrainingJob, seen map[string]string) {
	e.t.Helper()
	if c := groupCondition(got, plaingroup.ConditionCompleted); !strings.HasPrefix(c, "True") {
		e.t.Errorf("group condition Completed %q, want True: %+v", c, got.Status)
	}
	if got.Status.Restarts != 1 || got.Status.RestartsCountTowardsMax != 1 {
		e.t.Errorf("restarts %d, towards max %d, want 1 and 1", got.Status.Restarts, got.Status.RestartsCountTowardsMax)
	}
	l, w := got.Status.Launcher, got.Status.Workers
	if l == nil || w == nil || l.Attempt != 1 || w.Attempt != 1 || l.Succeeded != 1 || l.Failed != 0 || w.Failed != 2 || w.Succeeded != 0 {
		e.t.Errorf("launcher %+v, workers %+v: want attempt 1 in both, the launcher succeeded once, two worker failures", l, w)
	}
	e.checkLauncherDone(got)
	byRole := map[string]int{}
	for _, v := range seen {
		byRole[v]++
	}
	// Attempt 0's launcher may or may not have been created before worker 1
	// failed; attempt 1 has its two workers and its launcher, no more.
	if byRole["workers/0"] != 2 || byRole["workers/1"] != 2 || byRole["launcher/1"] != 1 || byRole["launcher/0"] > 1 {
		e.t.Errorf("pods seen by role/attempt %v, want 2 workers of each attempt and the launcher of attempt 1", byRole)
	}
	for k := range byRole {
		if a := k[len(k)-1:]; a != "0" && a != "1" {
			e.t.Errorf("a pod of attempt label %q", a)
		}
	}
}

// (l3) Worker 0 fails in every attempt: after maxRestarts (1) restarts the run
// fails with reason ReachedMaxRestarts; the workers count 4 failures (per attempt
// the failed one and the one its role's failure terminates); nothing is left
// running or tracked.
func TestLauncherMaxRestarts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rolePolicy(func(role, index, _ string) scenarios.Outcome {
		if role == controller.RoleWorkers && index == "0" {
			return scenarios.FailWith(1)
		}
		return scenarios.Outcome{}
	})
	e.create(e.newLauncherTJ("maxed", 2, 1))
	e.watchRun("maxed")
	got := e.waitFinished("maxed")
	if c := groupCondition(got, plaingroup.ConditionFailed); c != "True/ReachedMaxRestarts" || got.Status.TerminalState != "Failed" {
		t.Errorf("group condition Failed %q, terminalState %q, want True/ReachedMaxRestarts and Failed", c, got.Status.TerminalState)
	}
	if got.Status.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", got.Status.Restarts)
	}
	if w := got.Status.Workers; w == nil || w.Failed != 4 {
		t.Errorf("workers %+v, want 4 failures (two per attempt)", w)
	}
	e.checkLauncherDone(got)
}

// (l4) The controller stops once the restart is decided (status.restarts 1, the
// workers still at attempt 0) and a new one starts: the same end as (l2).
func TestLauncherControllerRestartMidRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	release := false
	e.rolePolicy(func(role, index, attempt string) scenarios.Outcome {
		mu.Lock()
		defer mu.Unlock()
		if attempt == "1" && !release {
			return scenarios.Outcome{}
		}
		return restartOnce(role, index, attempt)
	})
	e.create(e.newLauncherTJ("crash", 2, 1))
	seen := e.watchRun("crash")
	poll.Eventually(e.t, "the restart decided", func() (bool, string) {
		tj := e.get("crash")
		return tj.Status.Restarts == 1, fmt.Sprintf("%+v", tj.Status)
	})
	e.stopController()
	mid := e.get("crash")
	t.Logf("stopped at restarts %d, workers attempt %s", mid.Status.Restarts, attemptString(mid.Status.Workers))
	e.startController()
	mu.Lock()
	release = true
	mu.Unlock()
	var got *v1alpha1.TrainingJob
	poll.Eventually(e.t, "crash finished", func() (bool, string) {
		got = e.get("crash")
		return controller.Finished(got), fmt.Sprintf("restarts %d, workers %s, launcher %s, pods:%s",
			got.Status.Restarts, describeRole(got.Status.Workers), describeRole(got.Status.Launcher), describePods(e.pods()))
	})
	e.checkRestartedOnce(got, seen())
}

func describeRole(r *v1alpha1.RoleStatus) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("{attempt %d succeeded %d failed %d current %+v}", r.Attempt, r.Succeeded, r.Failed, r.Current)
}

func attemptString(r *v1alpha1.RoleStatus) string {
	if r == nil {
		return "-"
	}
	return strconv.Itoa(int(r.Attempt))
}

// (l5) A running run with a launcher is deleted (no garbage collector in envtest:
// the pods stay): the orphan cleanup removes every pod's tracking finalizer.
func TestLauncherDeletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rolePolicy(func(string, string, string) scenarios.Outcome { return scenarios.Outcome{} })
	e.create(e.newLauncherTJ("gone", 2, 0))
	e.waitRunning(3)
	if err := k8s.Delete(t.Context(), e.get("gone")); err != nil {
		t.Fatal(err)
	}
	poll.Eventually(e.t, "no pod keeps the tracking finalizer", func() (bool, string) {
		pods := e.pods()
		return len(pods) == 3 && count(pods, tracked) == 0, describePods(pods)
	})
}
