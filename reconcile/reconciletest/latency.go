package reconciletest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/reconcile"
)

// LatencyOptions configure RunLatency.
type LatencyOptions struct {
	// Pods is the Job's completions and parallelism (N); with Jobs, the largest
	// Job's. Required.
	Pods int
	// Jobs, when positive, runs that many Jobs created at once instead of one:
	// Job i (from 0) has 1 + i%Pods pods, so that Pods = 10 gives Jobs of 1 to 10
	// pods. Zero runs one Job of Pods pods.
	Jobs int
	// Workers is how many keys are synced at once, as client-go's workqueue
	// hands them out: a key to one worker at a time, a key queued again while it
	// is synced is synced once more after. Zero means 5, the default of the
	// kube-controller-manager's --concurrent-job-syncs. With one Job only one
	// worker is ever busy.
	Workers int
	// Indexed makes the Jobs Indexed; otherwise they are NonIndexed.
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
	// Release, for one Indexed Job, is the scenario of issue 20: the pods run
	// without succeeding until every index has one; then the pod of index Pods/2
	// is released mid-run (relabelled so that it no longer matches the Job's
	// selector, as another actor would), and once its replacement is created every
	// pod succeeds. LatencyResult.Replacement is the time from the release to
	// that creation.
	Release bool
	// Trace, when set, receives a line per sync (its start in L, the key with
	// several Jobs, what it returned, the calls made meanwhile by kind: those of
	// concurrent syncs too), to see where a run spends its time.
	Trace io.Writer
}

// LatencyResult is what RunLatency measured.
type LatencyResult struct {
	// Elapsed is the simulated time from the creation of the Jobs until the
	// status write that made the last of them Complete returned.
	Elapsed time.Duration
	// InL is Elapsed in units of the latency L.
	InL float64
	// P50InL and P99InL are the percentiles (nearest rank) of the time each Job
	// took from its creation to the return of the status write that made it
	// Complete, in L; with one Job, both are InL.
	P50InL, P99InL float64
	// Syncs counts the syncs of the Jobs, including skipped ones (stale cache,
	// expectations); a Job's stop counting when it is Complete.
	Syncs int
	// Writes counts every reconcile.Client call until every Job is Complete and no
	// pod carries the tracking finalizer; by kind: Creates, Patches, Deletes,
	// StatusWrites. Conflicts counts the calls answered 409.
	Writes, Creates, Patches, Deletes, StatusWrites, Conflicts int
	// Pods is the pods of all the Jobs; WritesPerPod is Writes / Pods.
	Pods         int
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

// RunLatency runs a Job of opts.Pods pods, or opts.Jobs Jobs created at once, to
// completion against a Cluster whose every reconcile.Client call takes
// opts.Latency (an interceptor whose Outcome.Delay is L for every call, and whose
// timeouts are the faults of CreateTimeouts), with a controller loop like
// client-go's (opts.Workers workers; a key synced by one worker at a time, and
// once more after when queued again meanwhile; pod events batched for the
// PodEventBatchPeriod; RequeueAfter honoured; errors retried after 5ms doubling,
// per key), and reports the time to Complete in units of L, the syncs and the API
// writes. Pods succeed the moment they are created (in the release scenario,
// LatencyOptions.Release, once the released index has its replacement). A run
// that does not finish within LatencyOptions.Limit returns ErrStepLimit.
//
// RunLatency must run inside a testing/synctest bubble (synctest.Test): time there is
// simulated, so a run of thousands of L takes as long as its computation, and the
// overlap of concurrent calls is exact. Outside a bubble it would sleep for real.
func RunLatency(ctx context.Context, opts LatencyOptions) (LatencyResult, error) {
	switch {
	case opts.Pods <= 0:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Pods = %d, must be positive", opts.Pods)
	case opts.Jobs < 0:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Jobs = %d, must not be negative", opts.Jobs)
	case opts.Workers < 0:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Workers = %d, must not be negative", opts.Workers)
	case opts.Release && !opts.Indexed:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Release needs Indexed: a NonIndexed Job has no index to replace")
	case opts.Release && opts.Jobs > 0:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Release runs one Job: Jobs = %d, want 0", opts.Jobs)
	case opts.Latency <= 0:
		return LatencyResult{}, fmt.Errorf("reconciletest: LatencyOptions.Latency = %v, must be positive", opts.Latency)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 100_000 * opts.Latency
	}
	workers := cmp.Or(opts.Workers, 5)
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
	names, pods, err := createLatencyJobs(c, opts, cfg.Name)
	if err != nil {
		return LatencyResult{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	lr := &latencyRun{opts: opts, c: c, r: r, m: m, q: newLatencyQueue(), start: start, jobs: len(names),
		sem: make(chan struct{}, 1), failures: map[string]int{}, cancel: cancel}
	cache := c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, c.Jobs().CachedOwner)
		for _, k := range res.Sync {
			lr.q.add(k, res.Delay)
		}
	})
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		if m := r.ObserveOwnerEvent(ev); m.Sync {
			lr.q.add(m.Key, m.Delay)
		}
	})
	var wg sync.WaitGroup
	startInformer(ctx, c, &wg)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr.worker(ctx)
		}()
	}
	wg.Wait()
	cancel()
	if err := m.failed(); err != nil {
		return LatencyResult{}, err
	}
	times := m.completionTimes(names, start)
	if len(times) < len(names) {
		return LatencyResult{}, fmt.Errorf("%w: RunLatency's limit, %v = %.0f L: %d of %d Jobs Complete",
			ErrStepLimit, limit, float64(limit)/float64(opts.Latency), len(times), len(names))
	}
	res := LatencyResult{Syncs: lr.syncs, Pods: pods}
	m.fill(&res)
	if opts.Release {
		res.Replacement = m.replacement()
		if res.Replacement == 0 {
			return res, errors.New("reconciletest: the Job completed without a replacement of the released pod")
		}
		res.ReplacementInL = float64(res.Replacement) / float64(opts.Latency)
	}
	inL := func(d time.Duration) float64 { return float64(d) / float64(opts.Latency) }
	res.Elapsed = times[len(times)-1]
	res.InL = inL(res.Elapsed)
	res.P50InL, res.P99InL = inL(percentile(times, 50)), inL(percentile(times, 99))
	res.WritesPerPod = float64(res.Writes) / float64(pods)
	return res, nil
}

// createLatencyJobs creates the Jobs of opts, managed by controller, and returns
// their names and their pods in all.
func createLatencyJobs(c *Cluster, opts LatencyOptions, controller string) ([]string, int, error) {
	var names []string
	pods := 0
	for i := range max(opts.Jobs, 1) {
		name, n := "latency", opts.Pods
		if opts.Jobs > 0 {
			name, n = fmt.Sprintf("latency-%05d", i), 1+i%opts.Pods
		}
		job := NewJob("default", name, int32(n), int32(n))
		job.Spec.ManagedBy = ptr.To(controller)
		if opts.Indexed {
			job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		if _, err := c.Jobs().Create(job); err != nil {
			return nil, 0, err
		}
		names = append(names, name)
		pods += n
	}
	return names, pods, nil
}

// percentile returns the p-th percentile (nearest rank) of the sorted ds.
func percentile(ds []time.Duration, p int) time.Duration {
	i := (len(ds)*p + 99) / 100
	return ds[max(i, 1)-1]
}
