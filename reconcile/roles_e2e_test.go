package reconcile_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// The end-to-end tests of SyncRoles run the real ownedpods.Compute on reconciletest's
// Store of Runs and Driver: a training job of workers (Indexed, a retry per index)
// and a launcher that waits for them to be Ready, succeeding when the launcher
// does, restarting the group on a worker's failure, failing at once on a worker
// exit code its pod failure policy calls fatal.

var trainKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
	Finalizer: "ml.example.com/tracking", KeyPrefix: "ml.example.com/trainingjob-"}

const (
	trainName = "train"
	fatalCode = 42
)

// trainingJob is n workers and a launcher that depends on them, success Any over
// the launcher, RestartJobSet up to maxRestarts, and FailJobSet on a role failed
// by its pod failure policy (a worker exiting with fatalCode).
func trainingJob(n, maxRestarts int32) *ownedpods.Workload {
	tmpl := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "trainer"}},
		}}
	}
	worker := ownedpods.Role{Name: "worker", Spec: plan.Spec{
		Template: tmpl(), Completions: ptr.To(n), Parallelism: ptr.To(n),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimitPerIndex: ptr.To[int32](1),
		MaxFailedIndexes: ptr.To[int32](0),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{fatalCode},
			},
		}}},
	}}
	launcher := ownedpods.Role{Name: "launcher", Spec: plan.Spec{
		Template: tmpl(), Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](0),
	}, DependsOn: []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}}
	return &ownedpods.Workload{
		Namespace: ns, Name: trainName, ManagedBy: ptr.To(testName),
		Roles:         []ownedpods.Role{worker, launcher},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: maxRestarts, Rules: []plaingroup.Rule{{
			Name: "fatal", Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"},
		}}},
	}
}

// podSlot is a role's index in one attempt.
type podSlot struct {
	role    string
	attempt int
	index   string
}

// trainRun is one training job on a Cluster, its kubelet script and the
// invariants checked at every step and every write.
type trainRun struct {
	t      testing.TB
	c      *reconciletest.Cluster
	owners *reconciletest.Store[*reconciletest.Run]
	r      *reconcile.Reconciler
	d      *reconciletest.Driver

	mu sync.Mutex
	// failures are the exit codes the kubelet fails the pods of a slot with, one
	// pod each, in order.
	failures map[podSlot][]int32
	// launcherFrom is the first attempt whose launcher succeeds; earlier ones run
	// until stopped.
	launcherFrom int
	// killed counts the pods the kubelet failed, per role; succeeded those it
	// made succeed.
	killed, succeeded map[string]int32
	// live is the pods in the cluster by name (from the watch events), attempts the
	// attempts of the pods ever created.
	live     map[string]*corev1.Pod
	attempts map[int]bool
	created  map[string]int32
	// blocking is the BlockingRecreate strategy: no pod of an attempt is created
	// while a pod of an earlier attempt of any role exists; with Recreate, of its
	// own role.
	blocking bool
	// violations collects what the write hook found (it may not fail the test
	// under the Cluster's lock).
	violations []string

	last  *ownedpods.Status
	steps int
}

func newTrainRun(t testing.TB, w *ownedpods.Workload, opts reconciletest.Options) *trainRun {
	t.Helper()
	opts.Owner = trainKind
	c, owners := reconciletest.NewStore(opts, reconciletest.RunType)
	tr := &trainRun{
		t: t, c: c, owners: owners,
		failures: map[podSlot][]int32{}, killed: map[string]int32{}, succeeded: map[string]int32{},
		live: map[string]*corev1.Pod{}, attempts: map[int]bool{}, created: map[string]int32{},
	}
	tr.r = tr.newReconciler()
	tr.blocking = w.FailurePolicy != nil && w.FailurePolicy.RestartStrategy == plaingroup.BlockingRecreate
	_, err := owners.Create(runOf(w))
	require.NoError(t, err)
	c.OnWrite(tr.observe)
	c.Kubelet().SetScript(tr.script)
	tr.d = reconciletest.NewDriver(c, tr.r)
	tr.d.SyncFunc, tr.d.DoneFunc = owners.SyncFunc(tr.r), owners.DoneFunc()
	tr.d.OnStep = tr.check
	return tr
}

// newReconciler is a new controller process: empty stores.
func (tr *trainRun) newReconciler() *reconcile.Reconciler {
	r, err := reconcile.New(reconcile.Config{Name: testName, Owner: trainKind, Clock: tr.c.Clock()}, tr.c, tr.c)
	require.NoError(tr.t, err)
	return r
}

// restart replaces the controller by a new process on the same cluster.
func (tr *trainRun) restart() {
	tr.r = tr.newReconciler()
	tr.d.Restart(tr.r)
	tr.d.SyncFunc = tr.owners.SyncFunc(tr.r)
}

func slotOf(p *corev1.Pod) podSlot {
	a, _ := strconv.Atoi(p.Labels[plaingroup.LabelRestartAttempt])
	return podSlot{role: p.Labels[plaingroup.LabelRoleName], attempt: a, index: p.Annotations[trainKind.IndexKey()]}
}

// script starts pods (ready at once), fails those a failure is scripted for and
// makes the launcher of launcherFrom or later succeed; workers run until stopped.
func (tr *trainRun) script(k *reconciletest.Kubelet, p *corev1.Pod) error {
	if p.DeletionTimestamp != nil {
		return nil
	}
	s := slotOf(p)
	switch p.Status.Phase {
	case corev1.PodPending:
		if err := k.Run(p.Namespace, p.Name); err != nil {
			return err
		}
		return k.SetReady(p.Namespace, p.Name, true)
	case corev1.PodRunning:
		tr.mu.Lock()
		codes := tr.failures[s]
		if len(codes) > 0 {
			tr.failures[s] = codes[1:]
			tr.killed[s.role]++
		}
		win := len(codes) == 0 && s.role == "launcher" && s.attempt >= tr.launcherFrom
		if win {
			tr.succeeded[s.role]++
		}
		tr.mu.Unlock()
		switch {
		case len(codes) > 0:
			return k.Fail(p.Namespace, p.Name, codes[0])
		case win:
			return k.Succeed(p.Namespace, p.Name)
		}
	}
	return nil
}

// observe is the write hook: no pod of an attempt is created while a pod of an
// earlier attempt exists (of its role under Recreate, of any under
// BlockingRecreate), and every pod carries its attempt in label and env.
func (tr *trainRun) observe(ev reconciletest.WatchEvent) {
	p := ev.Pod
	if p == nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch ev.Type {
	case watch.Deleted:
		delete(tr.live, p.Name)
		return
	case watch.Added:
		s := slotOf(p)
		for _, o := range tr.live {
			if os := slotOf(o); os.attempt < s.attempt && (tr.blocking || os.role == s.role) {
				tr.violations = append(tr.violations, fmt.Sprintf("pod %s of attempt %d created while pod %s of attempt %d exists", p.Name, s.attempt, o.Name, os.attempt))
			}
		}
		tr.attempts[s.attempt] = true
		tr.created[s.role]++
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env["JOBKIT_RESTART_ATTEMPT"] != strconv.Itoa(s.attempt) || env["JOBKIT_ROLE"] != s.role {
			tr.violations = append(tr.violations, fmt.Sprintf("pod %s: env %v, labels %v", p.Name, env, p.Labels))
		}
	}
	tr.live[p.Name] = p
}

// check runs after every step: one status write at most, totals and restarts
// never decrease, the write hook found nothing.
func (tr *trainRun) check(sr reconciletest.StepResult) {
	t := tr.t
	tr.steps = sr.Step
	assert.LessOrEqual(t, sr.Result.StatusWrites, 1, "step %d", sr.Step)
	w, err := tr.owners.Get(ns, trainName)
	if err != nil {
		return
	}
	if prev := tr.last; prev != nil {
		assert.GreaterOrEqual(t, w.Status.Restarts, prev.Restarts, "step %d: restarts", sr.Step)
		for i, rs := range w.Status.Roles {
			if i < len(prev.Roles) {
				assert.GreaterOrEqual(t, rs.Succeeded, prev.Roles[i].Succeeded, "step %d: %s succeeded", sr.Step, rs.Name)
				assert.GreaterOrEqual(t, rs.Failed, prev.Roles[i].Failed, "step %d: %s failed", sr.Step, rs.Name)
				assert.GreaterOrEqual(t, rs.Attempt, prev.Roles[i].Attempt, "step %d: %s attempt", sr.Step, rs.Name)
				if rs.Attempt > prev.Roles[i].Attempt {
					// The advance: nothing of the old attempt is counted in the new one.
					assert.Zero(t, rs.Job.Succeeded+rs.Job.Failed+rs.Job.Active, "step %d: %s starts attempt %d afresh: %+v", sr.Step, rs.Name, rs.Attempt, rs.Job)
					if u := rs.Job.UncountedTerminatedPods; u != nil {
						assert.Empty(t, append(u.Succeeded, u.Failed...), "step %d: %s ledger at the advance", sr.Step, rs.Name)
					}
				}
			}
		}
	}
	tr.last = &w.Status
	tr.mu.Lock()
	defer tr.mu.Unlock()
	assert.Empty(t, tr.violations, "step %d", sr.Step)
	tr.violations = nil
}

// run drives the owner until it is done, and checks that no pod keeps the
// finalizer and that no pod is counted twice.
func (tr *trainRun) run(maxSteps int) *reconciletest.Run {
	tr.t.Helper()
	_, err := tr.d.Run(tr.t.Context(), ns, trainName, maxSteps)
	require.NoError(tr.t, err)
	w, err := tr.owners.Get(ns, trainName)
	require.NoError(tr.t, err)
	tr.assertNoFinalizer()
	tr.assertNothingRuns()
	tr.assertCountedOnce(w)
	return w
}

// assertCountedOnce checks the totals of w against the pods: every success the
// kubelet made is counted, every failure it made too (exactly, in
// FailedOnTheirOwn), and no role counts more failures than it had pods (a
// failed role also counts the pods it stopped).
func (tr *trainRun) assertCountedOnce(w *reconciletest.Run) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, rs := range w.Status.Roles {
		assert.Equal(tr.t, tr.succeeded[rs.Name], rs.Succeeded, "%s succeeded", rs.Name)
		assert.GreaterOrEqual(tr.t, rs.Failed, tr.killed[rs.Name], "%s failed", rs.Name)
		assert.Equal(tr.t, tr.killed[rs.Name], rs.FailedOnTheirOwn, "%s: the pods that failed on their own are those the kubelet failed", rs.Name)
		assert.LessOrEqual(tr.t, rs.Failed+rs.Succeeded, tr.created[rs.Name], "%s: counted more pods than it had", rs.Name)
	}
}

func (tr *trainRun) assertNoFinalizer() {
	for _, p := range tr.c.ListPods(ns) {
		assert.False(tr.t, trainKind.HasFinalizer(p), "pod %s keeps the finalizer", p.Name)
	}
}

// assertNothingRuns checks that the owner left no pod running: each is finished
// or being deleted.
func (tr *trainRun) assertNothingRuns() {
	for _, p := range tr.c.ListPods(ns) {
		finished := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		assert.True(tr.t, finished || p.DeletionTimestamp != nil, "pod %s left %s", p.Name, p.Status.Phase)
	}
}

// totals are the role totals of w, by role name.
func totals(w *reconciletest.Run) map[string][2]int32 {
	out := map[string][2]int32{}
	for _, rs := range w.Status.Roles {
		out[rs.Name] = [2]int32{rs.Succeeded, rs.Failed}
	}
	return out
}

// The workers start, become ready; the launcher starts only then and succeeds;
// the workers are stopped, not counted; the owner ends Completed.
func TestSyncRolesE2ECompletion(t *testing.T) {
	tr := newTrainRun(t, trainingJob(3, 2), reconciletest.Options{Seed: 1})
	launcherBefore := true
	check := tr.d.OnStep
	tr.d.OnStep = func(sr reconciletest.StepResult) {
		check(sr)
		var ready, launchers int
		for _, p := range tr.c.ListPods(ns) {
			switch slotOf(p).role {
			case "worker":
				if p.Status.Phase == corev1.PodRunning {
					ready++
				}
			case "launcher":
				launchers++
			}
		}
		if launchers > 0 && launcherBefore {
			launcherBefore = false
			assert.Equal(t, 3, ready, "step %d: the launcher is created once the 3 workers run and are ready", sr.Step)
		}
	}
	w := tr.run(50)
	assert.Equal(t, "Completed", w.Status.TerminalState)
	assert.Equal(t, int32(0), w.Status.Restarts)
	assert.Equal(t, map[string][2]int32{"worker": {0, 0}, "launcher": {1, 0}}, totals(w))
	for _, rs := range w.Status.Roles {
		if u := rs.Job.UncountedTerminatedPods; u != nil {
			assert.Empty(t, u.Succeeded, "%s ledger", rs.Name)
			assert.Empty(t, u.Failed, "%s ledger", rs.Name)
		}
	}
	assert.Equal(t, map[int]bool{0: true}, tr.attempts)
}

// The launcher succeeds while the workers run (the success policy targets the
// launcher only): the write that completes the group stops the workers, and the
// owner's last write shows them stopped, not active and ready forever (issue
// 33). With the grace period honoured, the workers terminate for a while after
// the group completed: the status says so, then shows them gone.
func TestSyncRolesE2EFinalStatusShowsStoppedWorkers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace bool
	}{
		{name: "workers go at once"},
		{name: "workers terminate for their grace period", grace: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrainRun(t, trainingJob(3, 1), reconciletest.Options{Seed: 4})
			tr.c.Kubelet().HonourGracePeriod(tc.grace)
			w := tr.run(80)
			require.Equal(t, "Completed", w.Status.TerminalState)
			if tc.grace {
				var left int32
				for _, p := range tr.c.ListPods(ns) {
					if slotOf(p).role == "worker" {
						left++
					}
				}
				require.Equal(t, int32(3), left, "the workers are still terminating")
				assert.Equal(t, int32(3), ptr.Deref(roleJob(w, "worker").Terminating, 0), "the status counts them terminating")
				assert.Zero(t, roleJob(w, "worker").Active, "and not active")
				tr.c.Kubelet().HonourGracePeriod(false)
				w = tr.run(80)
			}
			for _, p := range tr.c.ListPods(ns) {
				assert.NotEqual(t, "worker", slotOf(p).role, "worker %s is left", p.Name)
			}
			for _, rs := range w.Status.Roles {
				assert.Zero(t, rs.Job.Active, "%s: active", rs.Name)
				assert.Zero(t, ptr.Deref(rs.Job.Ready, 0), "%s: ready", rs.Name)
				assert.Zero(t, ptr.Deref(rs.Job.Terminating, 0), "%s: terminating", rs.Name)
			}
			assert.Equal(t, map[string][2]int32{"worker": {0, 0}, "launcher": {1, 0}}, totals(w))
		})
	}
}

// roleJob is the Job status of w's role name.
func roleJob(w *reconciletest.Run, name string) batchv1.JobStatus {
	for _, rs := range w.Status.Roles {
		if rs.Name == name {
			return rs.Job
		}
	}
	return batchv1.JobStatus{}
}

// A worker failing beyond its retries restarts the group: attempt 0 is gone
// before attempt 1 starts, its pods are counted once, and attempt 1 completes.
func TestSyncRolesE2EGroupRestart(t *testing.T) {
	tr := newTrainRun(t, trainingJob(3, 2), reconciletest.Options{Seed: 2})
	tr.failures[podSlot{"worker", 0, "1"}] = []int32{1, 1}
	tr.launcherFrom = 1
	w := tr.run(80)
	assert.Equal(t, "Completed", w.Status.TerminalState)
	assert.Equal(t, int32(1), w.Status.Restarts)
	assert.Equal(t, int32(1), w.Status.RestartsCountTowardsMax)
	// The 2 failures of worker 1, and the 2 other workers that the failed role
	// stopped, counted failed as a failed Job counts its terminating pods; the
	// launcher of attempt 0, stopped by the group, is not counted.
	assert.Equal(t, map[string][2]int32{"worker": {0, 2 + 2}, "launcher": {1, 0}}, totals(w))
	assert.Equal(t, int32(2), tr.killed["worker"])
	for _, rs := range w.Status.Roles {
		assert.Equal(t, int32(1), rs.Attempt, "%s attempt", rs.Name)
	}
	assert.Equal(t, map[int]bool{0: true, 1: true}, tr.attempts)
}

// The restart budget spent fails the owner ReachedMaxRestarts; the fatal exit
// code fails it at once, with no restart.
func TestSyncRolesE2EFailure(t *testing.T) {
	tests := []struct {
		name         string
		failures     map[podSlot][]int32
		wantReason   string
		wantRestarts int32
		wantTotals   map[string][2]int32
	}{
		{
			name:         "max restarts",
			failures:     map[podSlot][]int32{{"worker", 0, "0"}: {1, 1}, {"worker", 1, "2"}: {1, 1}},
			wantReason:   "ReachedMaxRestarts",
			wantRestarts: 1,
			// Per attempt: 2 failures and the 2 other workers stopped by the failed role.
			wantTotals: map[string][2]int32{"worker": {0, 2 * (2 + 2)}, "launcher": {0, 0}},
		},
		{
			name:         "fatal exit code",
			failures:     map[podSlot][]int32{{"worker", 0, "1"}: {fatalCode}},
			wantReason:   "FailJobSetFailurePolicyAction",
			wantRestarts: 0,
			wantTotals:   map[string][2]int32{"worker": {0, 1 + 2}, "launcher": {0, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTrainRun(t, trainingJob(3, 1), reconciletest.Options{Seed: 3})
			tr.failures, tr.launcherFrom = tc.failures, 99
			w := tr.run(80)
			assert.Equal(t, "Failed", w.Status.TerminalState)
			var reason string
			for _, c := range w.Status.Conditions {
				if c.Type == plaingroup.ConditionFailed {
					reason = c.Reason
				}
			}
			assert.Equal(t, tc.wantReason, reason)
			assert.Equal(t, tc.wantRestarts, w.Status.Restarts)
			assert.Equal(t, tc.wantTotals, totals(w))
		})
	}
}

// Suspending the owner while its pods run stops every pod, counts none and keeps
// no finalizer, with the group's Suspended condition; resuming it starts over and
// completes.
func TestSyncRolesE2ESuspend(t *testing.T) {
	tr := newTrainRun(t, trainingJob(3, 2), reconciletest.Options{Seed: 9})
	tr.launcherFrom = 99
	ctx := t.Context()
	for range 4 {
		_, err := tr.d.Step(ctx, ns, trainName)
		require.NoError(t, err)
	}
	require.Len(t, tr.c.ListPods(ns), 4, "3 workers and the launcher run")
	_, err := tr.owners.Update(ns, trainName, func(w *reconciletest.Run) { w.Spec.Suspend = true })
	require.NoError(t, err)
	for range 4 {
		_, err := tr.d.Step(ctx, ns, trainName)
		require.NoError(t, err)
	}
	assert.Empty(t, tr.c.ListPods(ns), "every pod stopped and gone")
	w, err := tr.owners.Get(ns, trainName)
	require.NoError(t, err)
	var suspended bool
	for _, c := range w.Status.Conditions {
		suspended = suspended || (c.Type == plaingroup.ConditionSuspended && c.Status == "True")
	}
	assert.True(t, suspended, "Suspended condition: %+v", w.Status.Conditions)
	assert.Equal(t, map[string][2]int32{"worker": {0, 0}, "launcher": {0, 0}}, totals(w), "stopped pods are not counted")
	assert.Empty(t, w.Status.TerminalState)

	tr.mu.Lock()
	tr.launcherFrom = 0
	tr.mu.Unlock()
	_, err = tr.owners.Update(ns, trainName, func(w *reconciletest.Run) { w.Spec.Suspend = false })
	require.NoError(t, err)
	w = tr.run(50)
	assert.Equal(t, "Completed", w.Status.TerminalState)
	assert.Equal(t, map[string][2]int32{"worker": {0, 0}, "launcher": {1, 0}}, totals(w))
	assert.Equal(t, int32(0), w.Status.Restarts)
}
