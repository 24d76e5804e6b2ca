package reconciletest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// latencyRun is the controller of one RunLatency: its workers share the queue,
// the Reconciler and the model.
type latencyRun struct {
	opts  LatencyOptions
	c     *Cluster
	r     *reconcile.Reconciler
	m     *latencyModel
	q     *latencyQueue
	start time.Time
	jobs  int
	// sem lets one worker at a time wait for the bubble to settle
	// (synctest.Wait may not run concurrently); a channel, so that a worker
	// waiting for it is durably blocked.
	sem    chan struct{}
	cancel context.CancelFunc

	mu sync.Mutex
	// failures counts the errors in a row per key (the backoff of client-go's
	// rate limiter, per item); syncs the syncs of Jobs not yet Complete.
	failures map[string]int
	syncs    int
}

// worker is one worker of the run: it takes a key, lets the informer deliver
// every event due at this instant first (so that a run does not depend on which
// goroutine the scheduler wakes first), syncs the Job from the cache and
// requeues it as client-go's loop does; it ends the run once every Job is
// Complete with no tracking finalizer left, at the kubelet's first error, or
// when ctx ends.
func (lr *latencyRun) worker(ctx context.Context) {
	c, q := lr.c, lr.q
	for {
		k, ok := q.get(ctx)
		if !ok {
			return
		}
		lr.sem <- struct{}{}
		synctest.Wait()
		<-lr.sem
		if now := time.Now(); now.After(c.Clock().Now()) {
			c.Clock().SetTime(now)
		}
		ns, name, _ := strings.Cut(k, "/")
		cached := c.Jobs().Cached(ns, name)
		if cached == nil {
			q.done(k)
			continue
		}
		if !lr.m.isComplete(name) {
			lr.mu.Lock()
			lr.syncs++
			lr.mu.Unlock()
		}
		before := lr.m.snapshot()
		var seen string
		if lr.opts.Trace != nil {
			seen = lr.seen(cached)
		}
		syncStart := time.Now()
		out, err := lr.r.Sync(ctx, plan.JobWorkload(cached), c.Cache().OwnerPods)
		if lr.opts.Trace != nil {
			lr.trace(k, syncStart, before, seen, out, err)
		}
		lr.mu.Lock()
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil:
			lr.failures[k]++
			q.addAfterDone(k, 5*time.Millisecond<<min(lr.failures[k]-1, 20))
		default:
			delete(lr.failures, k)
			if out.RequeueAfter > 0 {
				q.addAfterDone(k, out.RequeueAfter)
			}
		}
		lr.mu.Unlock()
		q.done(k)
		if lr.m.finished(lr.jobs) || lr.m.failed() != nil {
			lr.cancel()
		}
	}
}

// seen describes what the sync of job starts from: the pods the cache shows
// against those stored, and whether the cached Job is older than the stored one
// (the sync then plans from the Job its last status write returned).
func (lr *latencyRun) seen(job *batchv1.Job) string {
	stored, err := lr.c.Jobs().Get(job.Namespace, job.Name)
	behind := err == nil && stored.ResourceVersion != job.ResourceVersion
	return fmt.Sprintf("cache: %d of %d pods, Job behind %v", len(lr.c.Cache().Pods(job.Namespace)), len(lr.c.ListPods(job.Namespace)), behind)
}

// why says what a sync that made no call waited for, from its Result.
func why(out reconcile.Result) string {
	switch p := out.Report.Plan; {
	case out.Report.Skipped != "":
		return "skipped: " + out.Report.Skipped
	case p == nil:
		return ""
	case len(p.Create)+len(p.Delete)+len(p.RemoveFinalizers) == 0 && p.RecordStatus == nil && !p.StatusChanged:
		return "nothing to do (creations in flight or nothing new)"
	}
	return ""
}

// trace writes the line of one sync to LatencyOptions.Trace.
func (lr *latencyRun) trace(key string, syncStart time.Time, before callCounts, seen string, out reconcile.Result, err error) {
	L := float64(lr.opts.Latency)
	after := lr.m.snapshot()
	who := ""
	if lr.opts.Jobs > 0 {
		who = " " + key
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	fmt.Fprintf(lr.opts.Trace, "%7.1f L sync%s (%.1f L): %s; creates %d, patches %d, deletes %d, status %d; requeue %v after %.1f L; err %v %s\n",
		float64(syncStart.Sub(lr.start))/L, who, float64(time.Since(syncStart))/L, seen,
		after.creates-before.creates, after.patches-before.patches, after.deletes-before.deletes, after.status-before.status,
		out.Retry != "", float64(out.RequeueAfter)/L, err, why(out))
}
