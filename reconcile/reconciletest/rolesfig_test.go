package reconciletest

// The figures of issue 22: one launcher and 64 workers run through an owner of
// several roles (Reconciler.SyncRoles) and through the JobSet-compatible path
// (childjobs.Compute executed by a test-side group controller, each child Job run by
// jobkit's Job Reconciler.Sync), on a Cluster whose every call takes L. The
// model is RunLatency's (latencyModel: the interceptor, the kubelet, the queue,
// the informer); this file adds what the two paths need around it: several
// workers on one bubble, the group owner's status store, the garbage collector
// of a foreground deletion, and the count of writes by who made them.

import (
	"context"
	"fmt"
	"sync"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The scenario of the figures.
const (
	figNamespace  = "default"
	figName       = "train"
	figWorkers    = 64
	figController = "jobkit.dev/figures"
	// figLimit bounds a run's simulated time, in L.
	figLimit = 10_000
	// figQuiet is how far ahead, in L, no sync may be due for a run to end.
	figQuiet = 10
)

// figResult is what one run of the figures measured.
type figResult struct {
	path string
	lag  time.Duration
	// completeInL is the time from the owner's creation to the return of the
	// status write that made it Complete; freeInL until the last tracking
	// finalizer was removed.
	completeInL, freeInL float64
	// owner holds the writes of the owner's controller (the roles controller;
	// the group controller, whose creates and deletes are of child Jobs),
	// jobs those of the Job controller of the children, gc the garbage
	// collector's pod deletions.
	owner, jobs, gc callCounts
	// created counts the pods created per role and index ("worker/3").
	created map[string]int
	// tracked lists the pods that still carry the tracking finalizer at the end.
	tracked []string
	// syncErrors counts the syncs that returned an error; conflicts the calls
	// answered 409 Conflict (counted in the writes: each was sent).
	syncErrors, conflicts int
}

func (c callCounts) total() int { return c.creates + c.patches + c.deletes + c.status }

func (r *figResult) writes() int { return r.owner.total() + r.jobs.total() + r.gc.total() }

// figRun is the machinery the two paths share: the Cluster with the latency
// model, the watch of the pods' finalizers and creations, the workers, and the
// end of the run.
type figRun struct {
	L     time.Duration
	c     *Cluster
	m     *latencyModel
	start time.Time
	// kind is the pods' owner kind: their tracking finalizer and index key.
	kind owner.Kind

	// sem lets one worker at a time wait for the bubble to settle
	// (synctest.Wait may not run concurrently); a channel, so that a worker
	// waiting for it is durably blocked.
	sem chan struct{}
	wg  sync.WaitGroup

	// done says whether the owner is Complete with no tracking finalizer left;
	// cancel ends the run.
	done   func() bool
	cancel context.CancelFunc

	mu         sync.Mutex
	busy       int
	queues     []*latencyQueue
	tracked    map[types.UID]string
	freeAt     time.Time
	created    map[string]int
	completeAt time.Time
	syncErrors int
}

// newFigRun installs the latency model on c: every call takes L, pods run at
// creation, the workers become Ready and stay, the launcher succeeds.
func newFigRun(c *Cluster, L time.Duration, kind owner.Kind) *figRun {
	f := &figRun{L: L, c: c, start: time.Now(), kind: kind, sem: make(chan struct{}, 1),
		tracked: map[types.UID]string{}, created: map[string]int{}}
	f.m = newLatencyModel(c, LatencyOptions{Pods: figWorkers + 1, Latency: L})
	f.m.hold = func(p *corev1.Pod) bool { return p.Labels[plaingroup.LabelRoleName] == "worker" }
	c.OnWrite(f.observe)
	return f
}

// observe is a write hook (under the Cluster's lock): it counts the pods created
// per slot and notes when the last tracking finalizer goes.
func (f *figRun) observe(ev WatchEvent) {
	p := ev.Pod
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Type == watch.Added {
		f.created[p.Labels[plaingroup.LabelRoleName]+"/"+p.Annotations[f.kind.IndexKey()]]++
	}
	if ev.Type != watch.Deleted && f.kind.HasFinalizer(p) {
		f.tracked[p.UID] = p.Name
		return
	}
	if _, ok := f.tracked[p.UID]; ok {
		delete(f.tracked, p.UID)
		if len(f.tracked) == 0 {
			f.freeAt = time.Now()
		}
	}
}

// completed notes the return of the status write that made the owner Complete.
func (f *figRun) completed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.completeAt.IsZero() {
		f.completeAt = time.Now()
	}
}

// tick moves the Cluster's clock to the bubble's time (never back).
func (f *figRun) tick() {
	if now := time.Now(); now.After(f.c.Clock().Now()) {
		f.c.Clock().SetTime(now)
	}
}

// call is one API call of an actor other than a reconcile.Client caller (the
// group controller, the garbage collector): it takes L, and the write happens at
// the end of it, as the interceptor does for the Cluster's calls.
func (f *figRun) call(write func() error) error {
	time.Sleep(f.L)
	f.tick()
	return write()
}

// settle waits until every other goroutine of the bubble is blocked (the
// informer has delivered what is due), one worker at a time.
func (f *figRun) settle() {
	f.sem <- struct{}{}
	synctest.Wait()
	<-f.sem
}

// worker starts a controller's worker on q, as RunLatency's loop: it waits for
// the events due at its instant, syncs, and requeues after RequeueAfter or after
// an error (5ms doubling).
func (f *figRun) worker(ctx context.Context, q *latencyQueue, sync func(ctx context.Context, key string) (time.Duration, error)) {
	f.mu.Lock()
	f.queues = append(f.queues, q)
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		failures := 0
		for {
			// The events due now are delivered before the next key is taken, and
			// those due when it is taken before it is synced, so that a run does
			// not depend on which goroutine the scheduler wakes first.
			f.settle()
			k, ok := q.get(ctx)
			if !ok {
				return
			}
			f.begin()
			f.settle()
			f.tick()
			after, err := sync(ctx, k)
			switch {
			case ctx.Err() != nil:
			case err != nil:
				f.mu.Lock()
				f.syncErrors++
				f.mu.Unlock()
				failures++
				q.addAfterDone(k, 5*time.Millisecond<<min(failures-1, 20))
			default:
				failures = 0
				if after > 0 {
					q.addAfterDone(k, after)
				}
			}
			q.done(k)
			f.end()
		}
	}()
}

// begin and end bracket the work of an actor (a sync, the garbage collector's
// deletions). The run ends (cancel) at the end of one when the owner is done
// (f.done: Complete, no tracking finalizer left) and every actor is idle with no
// sync due within figQuiet L: the writes that follow the last finalizer removal
// (a Job's count of its deleted pods) are in the figures, and no run depends on
// which actor notices first.
func (f *figRun) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.busy++
}

func (f *figRun) end() {
	f.mu.Lock()
	f.busy--
	f.mu.Unlock()
	f.settle()
	if f.done() && f.quiet() {
		f.cancel()
	}
}

// quiet reports whether no actor is at work and no queue holds a key due within
// figQuiet L.
func (f *figRun) quiet() bool {
	f.mu.Lock()
	busy, queues := f.busy, f.queues
	f.mu.Unlock()
	if busy > 0 {
		return false
	}
	horizon := time.Now().Add(figQuiet * f.L)
	for _, q := range queues {
		if q.dueBefore(horizon) {
			return false
		}
	}
	return true
}

// result waits for every goroutine of the run and fills what is common.
func (f *figRun) result(path string, lag time.Duration) (figResult, error) {
	f.wg.Wait()
	if err := f.m.failed(); err != nil {
		return figResult{}, err
	}
	var tracked []string
	conflicts := 0
	for _, call := range f.c.Calls() {
		if apierrors.IsConflict(call.Err) {
			conflicts++
		}
	}
	for _, p := range f.c.ListPods(figNamespace) {
		if f.kind.HasFinalizer(p) {
			tracked = append(tracked, p.Name)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	res := figResult{path: path, lag: lag, created: f.created, syncErrors: f.syncErrors, conflicts: conflicts, tracked: tracked}
	if f.completeAt.IsZero() {
		return res, fmt.Errorf("%s: not Complete within %d L", path, figLimit)
	}
	res.completeInL = float64(f.completeAt.Sub(f.start)) / float64(f.L)
	res.freeInL = float64(f.freeAt.Sub(f.start)) / float64(f.L)
	return res, nil
}
