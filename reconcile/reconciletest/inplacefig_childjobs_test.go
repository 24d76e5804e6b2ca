package reconciletest

// The restart figure of inplacefig_test.go on JobSet's shape: the group's
// roles run as child Jobs (childjobs.Compute executed by the figures' group
// controller, figGroup; each child Job run by jobkit's Job Reconciler.Sync).

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// runChildJobsRestartFigure runs the restart figure through child Jobs: a
// leader role of one Job of one pod and a worker role of one Job of 64 pods.
// In place, the group controller watches the group's pods (as
// controllerruntime.Options.InPlaceRestart does); by recreation, the failed
// worker fails its Job (backoffLimit 0) and the group deletes both Jobs
// (foreground: the garbage collector deletes their pods, then each Job once
// none of its pods is left) and creates them again.
func runChildJobsRestartFigure(ctx context.Context, L time.Duration, inPlace bool) (restartFig, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := NewCluster(Options{Clock: clk})
	f := newFigRun(c, L, owner.BatchJob)
	f.m.hold = func(*corev1.Pod) bool { return true }
	r, err := reconcile.New(reconcile.Config{Name: figController, Clock: clk, PodEventBatchPeriod: L / 5}, c, reconcile.JobStatusWriter(c))
	if err != nil {
		return restartFig{}, err
	}
	tmpl := func(n int32) batchv1.JobTemplateSpec {
		t := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To(n), Parallelism: ptr.To(n), BackoffLimit: ptr.To[int32](0),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: figPodTemplate()}}
		if inPlace {
			t.Spec.BackoffLimit, t.Spec.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
			t.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		return t
	}
	policy := &plaingroup.FailurePolicy{MaxRestarts: 3}
	if inPlace {
		policy.RestartStrategy = plaingroup.InPlaceRestart
	}
	g := &figGroup{f: f, uid: "jobset-" + figName}
	g.tune = func(in *childjobs.Input) {
		in.Spec = plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}, {Name: "worker", Replicas: 1}}, FailurePolicy: policy}
		in.Templates = []batchv1.JobTemplateSpec{tmpl(1), tmpl(figWorkers)}
		if inPlace {
			in.Pods = c.Cache().Pods(figNamespace)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	a := newFigAgents(f, inPlace, func() (plaingroup.InPlaceAttempts, int32) {
		g.mu.Lock()
		defer g.mu.Unlock()
		st := g.status
		return plaingroup.InPlaceAttempts{Previous: st.PreviousInPlaceRestartAttempt, Current: st.CurrentInPlaceRestartAttempt}, st.Restarts
	})
	a.extra = func() callCounts {
		g.mu.Lock()
		defer g.mu.Unlock()
		w, gc := g.writes, g.gc
		return callCounts{w.creates + gc.creates, w.patches + gc.patches, w.deletes + gc.deletes, w.status + gc.status}
	}
	jobs, groups, collector := newLatencyQueue(), newLatencyQueue(), newLatencyQueue()
	groupKey := reconcile.Key(figNamespace, figName)
	cache := c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, c.Jobs().CachedOwner)
		for _, k := range res.Sync {
			jobs.add(k, res.Delay)
		}
		if inPlace {
			groups.add(groupKey, 0) // the group watches its pods
		}
		collector.add(groupKey, 0)
	})
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		if m := r.ObserveOwnerEvent(ev); m.Sync {
			jobs.add(m.Key, m.Delay)
		}
		groups.add(groupKey, 0) // the group controller watches the Jobs it owns
	})
	startInformer(ctx, c, &f.wg)
	f.cancel = cancel
	f.done = func() bool { return false } // the scenario ends the run
	f.worker(ctx, groups, func(ctx context.Context, key string) (time.Duration, error) {
		after, err := g.sync(ctx, key)
		a.signal() // the agents watch the group's status
		return after, err
	})
	f.worker(ctx, jobs, func(ctx context.Context, k string) (time.Duration, error) {
		ns, name, _ := strings.Cut(k, "/")
		job := c.Jobs().Cached(ns, name)
		if job == nil {
			return 0, nil
		}
		out, err := r.Sync(ctx, plan.JobWorkload(job), cache.OwnerPods)
		return out.RequeueAfter, err
	})
	f.worker(ctx, collector, func(context.Context, string) (time.Duration, error) {
		// The end of a foreground deletion: a Job being deleted goes once no
		// pod of it is left.
		for _, j := range c.Jobs().List() {
			if j.DeletionTimestamp == nil {
				continue
			}
			left := false
			for _, p := range c.ListPods(j.Namespace) {
				if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == j.UID {
					left = true
				}
			}
			if !left {
				g.add(&g.gc.deletes)
				_ = f.call(func() error { return c.Jobs().Delete(j.Namespace, j.Name) })
			}
		}
		return 0, nil
	})
	groups.add(groupKey, 0)
	return a.scenario(ctx, cancel, L, "worker")
}

// The restart figure through child Jobs (JobSet's shape): in place, no Job
// and no pod is replaced; recreated, both Jobs and all 65 pods are, and it
// takes longer. The figures are logged for docs/jobset.md.
func TestInPlaceVersusRecreateTimeChildJobs(t *testing.T) {
	const L = 100 * time.Millisecond
	var in, re restartFig
	synctest.Test(t, func(t *testing.T) {
		var err error
		in, err = runChildJobsRestartFigure(t.Context(), L, true)
		require.NoError(t, err)
	})
	synctest.Test(t, func(t *testing.T) {
		var err error
		re, err = runChildJobsRestartFigure(t.Context(), L, false)
		require.NoError(t, err)
	})
	t.Logf("in place: %.1f L, %d writes (%+v, %d agent patches), %d container restarts, restarts %d", in.inL, in.writes(), in.owner, in.agentPatches, in.containerRuns, in.restarts)
	t.Logf("recreate: %.1f L, %d writes (%+v), %d pods created, restarts %d", re.inL, re.writes(), re.owner, re.podsReplaced, re.restarts)
	require.Zero(t, in.podsReplaced+in.owner.deletes+in.owner.creates, "in place: no pod and no Job replaced")
	require.Equal(t, figWorkers+1, in.agentPatches, "in place: one report per pod")
	require.Equal(t, int32(figWorkers+1), in.containerRuns, "in place: each container restarted once")
	require.Zero(t, in.restarts)
	require.Equal(t, int32(1), re.restarts)
	require.Equal(t, figWorkers+1, re.podsReplaced)
	require.Less(t, in.inL, re.inL/2, "in place takes less than half the time")
	require.Less(t, in.writes(), re.writes()/2, "and less than half the writes")
}
