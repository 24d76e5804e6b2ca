package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing/synctest"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// LatencyOptions configure RunLatency.
type LatencyOptions struct {
	// Pods is the Job's completions and parallelism (N). Required.
	Pods int
	// Indexed makes the Job Indexed; otherwise it is NonIndexed.
	Indexed bool
	// Latency is L, the time every reconcile.Client call takes from the caller's
	// point of view; the write happens at the end of it. Concurrent calls overlap.
	// Required.
	Latency time.Duration
	// EventLag is how long after a write its watch event reaches the informer (0: at
	// once, as with read-your-writes on a fast watch).
	EventLag time.Duration
	// Config is the Reconciler's configuration. RunLatency sets Clock; an empty Name
	// means "jobkit.dev/latency", a zero PodEventBatchPeriod L/5.
	Config reconcile.Config
	// Limit bounds the simulated time of the run; zero means 100,000 L.
	Limit time.Duration
	// CreateTimeouts makes that many pod creations, the first ones, time out, to
	// measure how long the controller takes to recover: the caller gets a timeout and
	// does not know whether the API server stored the pod. It did, unless
	// TimeoutsNotStored.
	CreateTimeouts    int
	TimeoutsNotStored bool
	// Release, for an Indexed Job, is the scenario of issue 20: the pods run
	// without succeeding until every index has one; then the pod of index Pods/2
	// is released mid-run (relabelled so that it no longer matches the Job's
	// selector, as another actor would), and once its replacement is created every
	// pod succeeds. LatencyResult.Replacement is the time from the release to
	// that creation.
	Release bool
	// Trace, when set, receives a line per sync (its start in L, what it returned,
	// the calls it made by kind), to see where a run spends its time.
	Trace io.Writer
}

// LatencyResult is what RunLatency measured.
type LatencyResult struct {
	// Elapsed is the simulated time from the Job's creation until the status write
	// that made it Complete returned.
	Elapsed time.Duration
	// InL is Elapsed in units of the latency L.
	InL float64
	// Syncs counts the syncs of the Job, including skipped ones (stale cache,
	// expectations); it stops counting when the Job is Complete.
	Syncs int
	// Writes counts every reconcile.Client call until the Job is Complete and no pod
	// carries the tracking finalizer; by kind: Creates, Patches, Deletes,
	// StatusWrites. Conflicts counts the calls answered 409.
	Writes, Creates, Patches, Deletes, StatusWrites, Conflicts int
	// WritesPerPod is Writes / Pods.
	WritesPerPod float64
	// Replacement (LatencyOptions.Release) is the time from the release of the
	// running pod to the creation of its index's replacement; ReplacementInL is it
	// in units of L.
	Replacement    time.Duration
	ReplacementInL float64
}

// String formats the result as one line.
func (r LatencyResult) String() string {
	return fmt.Sprintf("%.1f L, %d syncs, %d writes (%.3f per pod: %d creates, %d patches, %d deletes, %d status, %d conflicts)",
		r.InL, r.Syncs, r.Writes, r.WritesPerPod, r.Creates, r.Patches, r.Deletes, r.StatusWrites, r.Conflicts)
}

// RunLatency runs a Job of opts.Pods pods to completion against a Cluster whose every
// reconcile.Client call takes opts.Latency (an interceptor whose Outcome.Delay is L
// for every call, and whose timeouts are the faults of CreateTimeouts), with a controller loop like client-go's
// (one worker; a key queued again while it is synced is synced once more after; pod
// events batched for the PodEventBatchPeriod; RequeueAfter honoured; errors retried
// after 5ms doubling), and reports the time to Complete in units of L, the syncs and
// the API writes. Pods succeed the moment they are created (in the release
// scenario, LatencyOptions.Release, once the released index has its replacement).
// A run that does not finish within LatencyOptions.Limit returns ErrStepLimit.
//
// RunLatency must run inside a testing/synctest bubble (synctest.Test): time there is
// simulated, so a run of thousands of L takes as long as its computation, and the
// overlap of concurrent calls is exact. Outside a bubble it would sleep for real.
func RunLatency(ctx context.Context, opts LatencyOptions) (LatencyResult, error) {
	if opts.Pods <= 0 {
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Pods = %d, must be positive", opts.Pods)
	}
	if opts.Release && !opts.Indexed {
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Release needs Indexed: a NonIndexed Job has no index to replace")
	}
	if opts.Latency <= 0 {
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Latency = %v, must be positive", opts.Latency)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 100_000 * opts.Latency
	}
	start := time.Now()
	clk := clocktesting.NewFakeClock(start)
	c := NewCluster(Options{Clock: clk, EventLatency: opts.EventLag})
	cfg := opts.Config
	if cfg.Name == "" {
		cfg.Name = "jobkit.dev/latency"
	}
	if cfg.PodEventBatchPeriod == 0 {
		cfg.PodEventBatchPeriod = opts.Latency / 5
	}
	cfg.Clock = clk

	m := newLatencyModel(c, opts)
	r, err := reconcile.New(cfg, c, reconcile.JobStatusWriter(c))
	if err != nil {
		return LatencyResult{}, err
	}
	job := NewJob("default", "latency", int32(opts.Pods), int32(opts.Pods))
	job.Spec.ManagedBy = ptr.To(cfg.Name)
	if opts.Indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	job, err = c.Jobs().Create(job)
	if err != nil {
		return LatencyResult{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	q := newLatencyQueue()
	cache := c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, c.Jobs().CachedOwner)
		for _, k := range res.Sync {
			q.add(k, res.Delay)
		}
	})
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		if m := r.ObserveOwnerEvent(ev); m.Sync {
			q.add(m.Key, m.Delay)
		}
	})
	var wg sync.WaitGroup
	startInformer(ctx, c, &wg)

	var res LatencyResult
	completeAt := time.Time{}
	failures := 0
	for {
		k, ok := q.get(ctx)
		if !ok {
			break
		}
		// Let the informer deliver every event due at this instant first, so that a
		// run does not depend on which goroutine the scheduler wakes first.
		synctest.Wait()
		clk.SetTime(time.Now())
		cached := c.Jobs().Cached(job.Namespace, job.Name)
		if cached == nil {
			q.done(k)
			continue
		}
		if completeAt.IsZero() {
			res.Syncs++
		}
		before := m.snapshot()
		syncStart := time.Now()
		out, err := r.Sync(ctx, plan.JobWorkload(cached), cache.OwnerPods)
		if opts.Trace != nil {
			after := m.snapshot()
			fmt.Fprintf(opts.Trace, "%7.1f L sync (%.1f L): creates %d, patches %d, deletes %d, status %d; requeue %v after %.1f L; err %v\n",
				float64(syncStart.Sub(start))/float64(opts.Latency), float64(time.Since(syncStart))/float64(opts.Latency),
				after.creates-before.creates, after.patches-before.patches, after.deletes-before.deletes, after.status-before.status,
				out.Retry != "", float64(out.RequeueAfter)/float64(opts.Latency), err)
		}
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil:
			failures++
			q.addAfterDone(k, 5*time.Millisecond<<min(failures-1, 20))
		default:
			failures = 0
			if out.RequeueAfter > 0 {
				q.addAfterDone(k, out.RequeueAfter)
			}
		}
		q.done(k)
		stored, _ := c.Jobs().Get(job.Namespace, job.Name)
		if completeAt.IsZero() && stored != nil && jobstatus.IsConditionTrue(stored.Status.Conditions, batchv1.JobComplete) {
			completeAt = m.completedAt(start)
		}
		if !completeAt.IsZero() && noTrackedPods(c, stored) {
			break
		}
		if ctx.Err() != nil || m.failed() != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	if err := m.failed(); err != nil {
		return res, err
	}
	if completeAt.IsZero() {
		return res, fmt.Errorf("%w: RunLatency's limit, %v = %.0f L", ErrStepLimit, limit, float64(limit)/float64(opts.Latency))
	}
	m.fill(&res)
	if opts.Release {
		res.Replacement = m.replacement()
		if res.Replacement == 0 {
			return res, errors.New("reconciletest: the Job completed without a replacement of the released pod")
		}
		res.ReplacementInL = float64(res.Replacement) / float64(opts.Latency)
	}
	res.Elapsed = completeAt.Sub(start)
	res.InL = float64(res.Elapsed) / float64(opts.Latency)
	res.WritesPerPod = float64(res.Writes) / float64(opts.Pods)
	return res, nil
}

// noTrackedPods reports whether no pod of job carries the tracking finalizer.
func noTrackedPods(c *Cluster, job *batchv1.Job) bool {
	if job == nil {
		return true
	}
	for _, p := range c.ListPods(job.Namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == job.UID && owner.BatchJob.HasFinalizer(p) {
			return false
		}
	}
	return true
}
