package reconciletest

// The time, in units of L, and the writes of one restart of a group of 1
// leader and 64 workers whose pods jobkit owns (Reconciler.SyncRoles), in
// place against by recreation, on the latency model of the figures (figRun:
// every API call takes L, pods run and become Ready the moment they are
// created). The agents of an in-place restart are modelled here: each reacts
// to its pod and to the owner's status at once, restarts its container (the
// kubelet's work, which takes no time in the model) and patches its pod's
// attempt annotation (an API call: L).

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// restartFig is what one run of the restart figure measured, from the failure
// of one worker until every pod works again on the next attempt.
type restartFig struct {
	inL           float64
	owner         callCounts // the controller's writes
	agentPatches  int        // the agents' annotations (in place)
	podsReplaced  int        // pods created during the restart
	syncErrors    int
	restarts      int32 // the group's status.restarts at the end
	containerRuns int32 // the container restarts summed over pods
}

func (r restartFig) writes() int { return r.owner.total() + r.agentPatches }

// figAgents are the agents of every pod of an in-place restart, or (off) only
// the watch that tells when the group runs again. Both check the barrier: no
// pod works on one attempt beside a pod working on another (by recreation, a
// pod works while it runs and is Ready).
type figAgents struct {
	f       *figRun
	inPlace bool
	// status reads the group's in-place attempts and restarts as stored.
	status func() (attempts plaingroup.InPlaceAttempts, restarts int32)
	// extra, when set, counts the writes made outside the Cluster's Client
	// (a test-side group controller's, a garbage collector's).
	extra func() callCounts

	mu       sync.Mutex
	reported map[string]int32 // the container restart count at the agent's last report
	attempt  map[string]int32 // the attempt each agent reported
	pending  map[string]bool  // a report in flight
	working  map[string]int32 // the attempt each working pod runs
	patches  int
	wake     chan struct{}
	// phase 0: the group starts; 1: one worker failed at failedAt; 2: every
	// pod works again, at endedAt.
	phase             int
	failedAt, endedAt time.Time
	// barrier is the first pod found working beside one of another attempt.
	barrier string
}

// react runs every agent once over the pods and the status as they are now.
func (a *figAgents) react() {
	inPlace, groupRestarts := a.status()
	pods := a.f.c.ListPods(figNamespace)
	k := a.f.c.Kubelet()
	a.mu.Lock()
	defer a.mu.Unlock()
	live := 0
	if !a.inPlace {
		clear(a.working) // the pods that run: every live pod runs its worker
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				_ = k.FinishTermination(p.Namespace, p.Name) // the kubelet stops a deleted pod at once
			}
			continue
		}
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		live++
		if !a.inPlace {
			if n, err := strconv.Atoi(p.Labels[plaingroup.LabelRestartAttempt]); err == nil && isReady(p) && int32(n) <= groupRestarts {
				a.working[p.Name] = int32(n)
			}
			continue
		}
		restarts := p.Status.ContainerStatuses[0].RestartCount
		prev, cur := inPlace.Previous, inPlace.Current
		if r, ok := a.reported[p.Name]; !ok || r != restarts {
			if a.pending[p.Name] {
				continue
			}
			attempt := int32(0)
			if cur != nil {
				attempt = *cur + 1
			}
			a.pending[p.Name] = true
			delete(a.working, p.Name)
			a.f.begin()
			go func() {
				defer a.f.end()
				patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, plaingroup.AnnotationInPlaceRestartAttempt, strconv.Itoa(int(attempt)))
				err := a.f.call(func() error { _, err := a.f.c.PatchPodAs(p.Namespace, p.Name, []byte(patch)); return err })
				a.mu.Lock()
				defer a.mu.Unlock()
				a.pending[p.Name] = false
				if err == nil {
					a.patches++
					a.reported[p.Name], a.attempt[p.Name] = restarts, attempt
				}
				a.signal()
			}()
			continue
		}
		switch attempt := a.attempt[p.Name]; {
		case prev != nil && attempt <= *prev:
			delete(a.working, p.Name)
			_ = k.RestartContainer(p.Namespace, p.Name) // the agent exits; the kubelet restarts the pod's containers
		case cur != nil && attempt == *cur:
			a.working[p.Name] = attempt
			if !isReady(p) {
				_ = k.SetReady(p.Namespace, p.Name, true)
			}
		}
	}
	for name, w := range a.working {
		for other, o := range a.working {
			if w != o && a.barrier == "" {
				a.barrier = fmt.Sprintf("%v after the failure: pod %s works on attempt %d beside pod %s on attempt %d", time.Since(a.failedAt), name, w, other, o)
			}
		}
	}
	want := int32(0)
	if a.phase >= 1 {
		want = 1
	}
	all := live == figWorkers+1 && len(a.working) == figWorkers+1
	for _, w := range a.working {
		all = all && w == want
	}
	if a.phase == 1 && all {
		a.phase, a.endedAt = 2, time.Now()
	}
}

func (a *figAgents) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// runRestartFigure runs the group until every pod works, fails one worker (in
// place: its container; by recreation: its pod, which fails its role and so
// restarts the group), and runs until every pod works again.
func runRestartFigure(ctx context.Context, L time.Duration, inPlace bool) (restartFig, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c, owners := NewStore(Options{Clock: clk, Owner: figKind}, RunType)
	f := newFigRun(c, L, figKind)
	f.m.hold = func(*corev1.Pod) bool { return true }
	r, err := reconcile.New(reconcile.Config{Name: figController, Owner: figKind, Clock: clk, PodEventBatchPeriod: L / 5}, c, c)
	if err != nil {
		return restartFig{}, err
	}
	role := func(name string, n int32) ownedpods.Role {
		tmpl := figPodTemplate()
		spec := plan.Spec{Template: &tmpl, Completions: ptr.To(n), Parallelism: ptr.To(n),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](0)}
		if inPlace {
			tmpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			spec.BackoffLimit, spec.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
		}
		return ownedpods.Role{Name: name, Spec: spec}
	}
	policy := &plaingroup.FailurePolicy{MaxRestarts: 3}
	if inPlace {
		policy.RestartStrategy = plaingroup.InPlaceRestart
	}
	if _, err := owners.Create(runOf(&ownedpods.Workload{Namespace: figNamespace, Name: figName, ManagedBy: ptr.To(figController),
		Roles: []ownedpods.Role{role("leader", 1), role("worker", figWorkers)}, FailurePolicy: policy})); err != nil {
		return restartFig{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	a := newFigAgents(f, inPlace, func() (plaingroup.InPlaceAttempts, int32) {
		run, err := owners.Get(figNamespace, figName)
		if err != nil {
			return plaingroup.InPlaceAttempts{}, 0
		}
		return run.Status.InPlace, run.Status.Restarts
	})
	q := newLatencyQueue()
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, owners.liveFacts)
		for _, k := range res.Sync {
			q.add(k, res.Delay)
		}
	})
	startInformer(ctx, c, &f.wg)
	f.cancel = cancel
	f.done = func() bool { return false } // the phases below end the run
	f.worker(ctx, q, func(ctx context.Context, _ string) (time.Duration, error) {
		run, err := owners.Get(figNamespace, figName)
		if err != nil {
			return 0, err
		}
		w, err := RunType.Roles(run)
		if err != nil {
			return 0, err
		}
		res, err := r.SyncRoles(ctx, w, owners.rolesPods, owners.RolesWriter())
		if res.Report.StatusWrites > 0 {
			q.add(reconcile.Key(figNamespace, figName), 0) // the event of the owner's own status write
		}
		return res.RequeueAfter, err
	})
	q.add(reconcile.Key(figNamespace, figName), 0)
	return a.scenario(ctx, cancel, L, "worker")
}

func newFigAgents(f *figRun, inPlace bool, status func() (plaingroup.InPlaceAttempts, int32)) *figAgents {
	a := &figAgents{f: f, inPlace: inPlace, status: status, reported: map[string]int32{}, attempt: map[string]int32{},
		pending: map[string]bool{}, working: map[string]int32{}, wake: make(chan struct{}, 1)}
	f.c.OnWrite(func(WatchEvent) { a.signal() })
	return a
}

func describeAttempts(a plaingroup.InPlaceAttempts) string {
	return fmt.Sprintf("%d/%d", ptr.Deref(a.Previous, -1), ptr.Deref(a.Current, -1))
}

// scenario runs the agents (or the watch of a recreate) and the phases of the
// figure until every pod works again after the failure of the first pod of
// role, and measures it. The controllers run meanwhile on f's workers.
func (a *figAgents) scenario(ctx context.Context, cancel context.CancelFunc, L time.Duration, role string) (restartFig, error) {
	f, c := a.f, a.f.c
	var err error
	snapshot := func() callCounts {
		n := f.m.snapshot()
		if a.extra != nil {
			e := a.extra()
			n = callCounts{n.creates + e.creates, n.patches + e.patches, n.deletes + e.deletes, n.status + e.status}
		}
		return n
	}
	var start callCounts
	var startPods int
	var victim string
	f.wg.Add(1)
	go func() { // the agents, and the scenario's phases
		defer f.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.wake:
			case <-time.After(L):
			}
			f.begin()
			a.react()
			a.mu.Lock()
			phase, steady := a.phase, len(a.working) == figWorkers+1
			a.mu.Unlock()
			switch {
			case phase == 0 && steady && f.quiet1():
				start, startPods = snapshot(), f.m.snapshot().creates
				victim = "" // the first pod of the role by name
				for _, p := range c.ListPods(figNamespace) {
					if p.Labels[plaingroup.LabelRoleName] == role && (victim == "" || p.Name < victim) {
						victim = p.Name
					}
				}
				a.mu.Lock()
				a.phase, a.failedAt, a.patches = 1, time.Now(), 0
				a.mu.Unlock()
				if a.inPlace {
					err = c.Kubelet().RestartContainer(figNamespace, victim)
				} else {
					err = c.Kubelet().Fail(figNamespace, victim, 1)
				}
				if err != nil {
					cancel()
				}
			case phase == 2 && f.quiet1():
				cancel()
			}
			f.end()
		}
	}()
	f.wg.Wait()
	if err != nil {
		return restartFig{}, err
	}
	if err := f.m.failed(); err != nil {
		return restartFig{}, err
	}
	if a.barrier != "" {
		return restartFig{}, fmt.Errorf("the barrier was crossed: %s", a.barrier)
	}
	if a.phase != 2 {
		hist := map[int32]int{}
		for _, w := range a.working {
			hist[w]++
		}
		attempts, restarts := a.status()
		return restartFig{}, fmt.Errorf("the group did not run again within %d L (phase %d, pods working by attempt %v, in place %s, restarts %d)",
			figLimit, a.phase, hist, describeAttempts(attempts), restarts)
	}
	_, restartsNow := a.status()
	end := snapshot()
	out := restartFig{inL: float64(a.endedAt.Sub(a.failedAt)) / float64(L), agentPatches: a.patches, syncErrors: f.syncErrors,
		owner:    callCounts{end.creates - start.creates, end.patches - start.patches, end.deletes - start.deletes, end.status - start.status},
		restarts: restartsNow}
	out.podsReplaced = f.m.snapshot().creates - startPods
	for _, p := range c.ListPods(figNamespace) {
		if len(p.Status.ContainerStatuses) > 0 {
			out.containerRuns += p.Status.ContainerStatuses[0].RestartCount
		}
	}
	return out, nil
}

// quiet1 is quiet with the caller's own work counted: the agents' goroutine
// asks between begin and end.
func (f *figRun) quiet1() bool {
	f.mu.Lock()
	f.busy--
	f.mu.Unlock()
	q := f.quiet()
	f.mu.Lock()
	f.busy++
	f.mu.Unlock()
	return q
}

// One restart of 1 leader and 64 workers whose pods jobkit owns, in place and
// by recreation, in time (units of L) and writes, on the latency model. In
// place, the agents' two rounds (report the next attempt, then restart and
// report again) and the controller's two status writes (previous, then
// current) are the critical path; recreated, the group's status, the stop of
// 65 pods (finalizer and deletion), the advance, and the slow-start batches
// of 65 creations. The figures are logged for docs/jobset.md.
func TestInPlaceVersusRecreateTime(t *testing.T) {
	const L = 100 * time.Millisecond
	var in, re restartFig
	synctest.Test(t, func(t *testing.T) {
		var err error
		in, err = runRestartFigure(t.Context(), L, true)
		require.NoError(t, err)
	})
	synctest.Test(t, func(t *testing.T) {
		var err error
		re, err = runRestartFigure(t.Context(), L, false)
		require.NoError(t, err)
	})
	t.Logf("in place: %.1f L, %d writes (%+v, %d agent patches), %d container restarts, restarts %d", in.inL, in.writes(), in.owner, in.agentPatches, in.containerRuns, in.restarts)
	t.Logf("recreate: %.1f L, %d writes (%+v), %d pods created, restarts %d", re.inL, re.writes(), re.owner, re.podsReplaced, re.restarts)
	require.Zero(t, in.podsReplaced+in.owner.deletes, "in place: no pod replaced")
	require.Equal(t, figWorkers+1, in.agentPatches, "in place: one report per pod")
	require.Equal(t, int32(figWorkers+1), in.containerRuns, "in place: each container restarted once")
	require.Zero(t, in.restarts)
	require.Equal(t, int32(1), re.restarts)
	require.Equal(t, figWorkers+1, re.podsReplaced)
	require.Less(t, in.inL, re.inL/2, "in place takes less than half the time")
	require.Less(t, in.writes(), re.writes()/2, "and less than half the writes")
}
