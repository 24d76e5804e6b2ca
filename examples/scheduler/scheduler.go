package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jobkit/jobkit/plain/active"
	"github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plain/concurrency"
	"github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plain/podfailurepolicy"
	"github.com/jobkit/jobkit/plain/successpolicy"
)

// ContainerName is the name a task's exit code is reported under to the failure
// rules (onExitCodes.containerName).
const ContainerName = "task"

// ExitTimedOut is the exit code of a task stopped by its RunTimeout, as a process
// killed by SIGKILL reports it.
const ExitTimedOut = 137

// Group is a set of indexed tasks run to completion, like an Indexed Job.
type Group struct {
	// Name identifies the group in reports and failure messages. Required.
	Name string
	// Queue is the queue whose capacity (Limits.Queues) the group's tasks share, or
	// "" for none.
	Queue string
	// Tasks is the number of tasks, indexed 0 to Tasks-1 (completions). Required.
	Tasks int
	// Parallelism is the most tasks of the group running at once; 0 means 1.
	Parallelism int
	// RetriesPerIndex is how many counted failures an index may have before it
	// fails (backoffLimitPerIndex): 0 fails an index at its first failure.
	RetriesPerIndex int32
	// Backoff is the wait before an index runs again after a failure; the zero
	// value means 10s doubling to 10m.
	Backoff backoff.Policy
	// FailurePolicy decides what a failed task means, from its exit code
	// (container ContainerName): fail the group, fail the index, ignore the failure
	// or count it. nil counts every failure.
	FailurePolicy *podfailurepolicy.Policy
	// SuccessPolicy declares the group succeeded before every task has; nil means
	// every task must succeed.
	SuccessPolicy *successpolicy.Policy
	// RunTimeout stops a task that runs longer (it fails with ExitTimedOut); 0
	// means none.
	RunTimeout time.Duration
}

// Func runs the task of index and returns its exit code (0 is success). It must
// return soon after ctx is done: the scheduler cancels ctx when the run times out or
// the group ends.
type Func func(ctx context.Context, index int) int32

// Result is how a group ended.
type Result struct {
	// Succeeded reports whether the group succeeded.
	Succeeded bool
	// Reason and Message say why it ended, as the Job controller's conditions do
	// (CompletionsReached, SuccessPolicy, PodFailurePolicy, FailedIndexes).
	Reason, Message string
	// SucceededIndexes and FailedIndexes are the final index sets, in the status
	// form ("0-3,5").
	SucceededIndexes, FailedIndexes string
	// Runs counts the tasks started; Failures the runs that failed, counted or not.
	Runs, Failures int
}

// Scheduler runs groups, sharing queue capacities and the global cap between the
// groups it runs at once. It is safe for concurrent use: run several groups with
// several calls to Run.
type Scheduler struct {
	limits concurrency.Limits

	mu      sync.Mutex
	seq     int
	running map[string]concurrency.Peer[string] // by run ID
}

// New returns a Scheduler with the given limits: MaxPending caps the tasks running
// at once over every group, Queues the tasks running at once per queue.
func New(limits concurrency.Limits) *Scheduler {
	return &Scheduler{limits: limits, running: map[string]concurrency.Peer[string]{}}
}

// ErrInvalidGroup is wrapped by the errors Run returns for a Group it cannot run.
var ErrInvalidGroup = errors.New("invalid group")

func (g *Group) validate() error {
	var errs []error
	bad := func(field string, value any, msg string) {
		errs = append(errs, fmt.Errorf("%w: %s: %v: %s", ErrInvalidGroup, field, value, msg))
	}
	if g.Name == "" {
		bad("Name", `""`, "required")
	}
	if g.Tasks <= 0 {
		bad("Tasks", g.Tasks, "must be positive")
	}
	if g.Parallelism < 0 {
		bad("Parallelism", g.Parallelism, "must not be negative")
	}
	if g.RetriesPerIndex < 0 {
		bad("RetriesPerIndex", g.RetriesPerIndex, "must not be negative")
	}
	if g.RunTimeout < 0 {
		bad("RunTimeout", g.RunTimeout, "must not be negative")
	}
	if g.FailurePolicy != nil {
		c := podfailurepolicy.Context{HasContainer: func(name string) bool { return name == ContainerName }, PerIndexBackoff: true}
		for _, e := range podfailurepolicy.Validate(g.FailurePolicy, c) {
			errs = append(errs, fmt.Errorf("%w: FailurePolicy: %v", ErrInvalidGroup, e))
		}
	}
	if g.SuccessPolicy != nil {
		for _, e := range successpolicy.Validate(g.SuccessPolicy, g.Tasks) {
			errs = append(errs, fmt.Errorf("%w: SuccessPolicy: %v", ErrInvalidGroup, e))
		}
	}
	return errors.Join(errs...)
}

// outcome is what a finished run reports back to its group's loop.
type outcome struct {
	index    int
	id       string
	exitCode int32
}

// run is a task running.
type run struct {
	id      string
	start   time.Time
	cancel  context.CancelFunc
	expired bool // stopped by its RunTimeout
}

// group is the state of one Run.
type group struct {
	s   *Scheduler
	g   Group
	fn  Func
	out chan outcome
	wg  sync.WaitGroup

	succeeded, failed indexes.Intervals
	counts            map[int]indexes.FailureCount // failure counts of each index's next run
	lastFailure       map[int]time.Time
	lastFailedCount   map[int]indexes.FailureCount // the counts of the index's run that failed last
	running           map[int]*run
	res               Result
}

// Run runs g to completion with fn and returns how it ended. It returns an error,
// and runs nothing, for a Group that is not valid, and ctx's error when ctx ends
// first (after the running tasks have returned).
func (s *Scheduler) Run(ctx context.Context, g Group, fn Func) (Result, error) {
	if err := g.validate(); err != nil {
		return Result{}, err
	}
	if g.Parallelism == 0 {
		g.Parallelism = 1
	}
	if g.Backoff == (backoff.Policy{}) {
		g.Backoff = backoff.Policy{Base: backoff.DefaultBase, Max: backoff.DefaultMax}
	}
	var compiled *successpolicy.Compiled
	if g.SuccessPolicy != nil {
		var err error
		if compiled, err = successpolicy.Compile(g.SuccessPolicy, g.Tasks); err != nil {
			return Result{}, fmt.Errorf("%w: SuccessPolicy: %w", ErrInvalidGroup, err)
		}
	}
	st := &group{s: s, g: g, fn: fn, out: make(chan outcome), counts: map[int]indexes.FailureCount{},
		lastFailure: map[int]time.Time{}, lastFailedCount: map[int]indexes.FailureCount{}, running: map[int]*run{}}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		go func() { // drain the runs still returning
			for range st.out {
			}
		}()
		st.wg.Wait()
		close(st.out)
	}()
	for {
		now := time.Now()
		if done := st.finished(compiled); done {
			st.stopAll()
			st.res.SucceededIndexes, st.res.FailedIndexes = st.succeeded.String(), st.failed.String()
			return st.res, nil
		}
		wait := st.start(ctx, now)
		if w := st.expire(now); w > 0 && (wait == 0 || w < wait) {
			wait = w
		}
		var timer <-chan time.Time
		if wait > 0 {
			timer = time.After(wait)
		}
		select {
		case <-ctx.Done():
			st.stopAll()
			return st.res, ctx.Err()
		case o := <-st.out:
			st.record(o, time.Now())
		case <-timer:
		}
	}
}

// finished reports whether the group is done, and sets its result.
func (st *group) finished(compiled *successpolicy.Compiled) bool {
	if st.res.Reason != "" { // a FailJob rule ended it
		return true
	}
	if m := compiled.Match(st.succeeded); m.Matched {
		st.res.Succeeded, st.res.Reason, st.res.Message = true, m.Reason, m.Message
		return true
	}
	done := st.succeeded.Count() + st.failed.Count()
	if done < st.g.Tasks || len(st.running) > 0 {
		return false
	}
	if st.failed.Count() > 0 {
		st.res.Reason, st.res.Message = "FailedIndexes", "Job has failed indexes"
		return true
	}
	st.res.Succeeded, st.res.Reason, st.res.Message = true, "CompletionsReached", "Reached expected number of succeeded pods"
	return true
}

// expire stops the runs past their RunTimeout and returns how long until the next
// one expires (0: none).
func (st *group) expire(now time.Time) time.Duration {
	var next time.Duration
	for _, r := range st.running {
		d := deadlines.Measure(deadlines.KindRunning, r.start, st.g.RunTimeout, now)
		switch {
		case d.Expired && !r.expired:
			r.expired = true
			r.cancel()
		case d.Remaining > 0 && (next == 0 || d.Remaining < next):
			next = d.Remaining
		}
	}
	return next
}

// start starts the tasks the group wants now and returns how long until an index
// waiting for its backoff, or for a queue slot, may start (0: nothing waits).
func (st *group) start(ctx context.Context, now time.Time) time.Duration {
	g := st.g
	want := active.Want(active.Job{
		Completions: g.Tasks,
		Parallelism: g.Parallelism,
		Succeeded:   st.succeeded.Count() + st.failed.Count(), // indexes done either way
		Active:      len(st.running),
	})
	var wait time.Duration
	later := func(d time.Duration) {
		if d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	runningIx := make([]int, 0, len(st.running))
	for ix := range st.running {
		runningIx = append(runningIx, ix)
	}
	slices.Sort(runningIx)
	inBackoff := func(ix int) bool {
		last, ok := st.lastFailure[ix]
		if !ok {
			return false
		}
		// The delay follows the failures before the last one, as the Job
		// controller reads them from the failed pod's annotations.
		c := st.lastFailedCount[ix]
		left := g.Backoff.IndexRemaining(c.Failed, c.Ignored, last, now)
		later(left)
		return left > 0
	}
	for _, ix := range indexes.FirstPendingFunc(g.Tasks, want-len(st.running), inBackoff, st.succeeded, st.failed, indexes.FromIndexes(runningIx)) {
		id, ok, retry := st.s.admit(g, ix, now)
		if !ok {
			later(retry)
			break
		}
		rctx, cancel := context.WithCancel(ctx)
		r := &run{id: id, start: now, cancel: cancel}
		st.running[ix] = r
		st.res.Runs++
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			code := st.fn(rctx, ix)
			st.out <- outcome{index: ix, id: id, exitCode: code}
		}()
	}
	return wait
}

// admit asks the limits whether a task of g may start now; when it may, the task
// holds a slot until release.
func (s *Scheduler) admit(g Group, index int, now time.Time) (id string, ok bool, retry time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id = g.Name + "/" + strconv.Itoa(index) + "#" + strconv.Itoa(s.seq)
	peers := make([]concurrency.Peer[string], 0, len(s.running))
	for _, p := range s.running {
		peers = append(peers, p)
	}
	me := concurrency.Peer[string]{UID: id, JobName: g.Name, Queue: g.Queue, State: concurrency.StateTriggered, Created: now}
	d, err := concurrency.Decide(concurrency.Candidate[string]{Peer: me}, peers, s.limits)
	if err != nil || !d.Allowed {
		return "", false, max(d.RetryAfter, concurrency.DefaultRetryAfter/10)
	}
	me.State = concurrency.StatePending
	s.running[id] = me
	return id, true, 0
}

func (s *Scheduler) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, id)
}

// record applies the outcome of a run: its index succeeds, or its failure goes
// through the failure rules and the per-index retry limit. An index keeps its first
// outcome.
func (st *group) record(o outcome, now time.Time) {
	r := st.running[o.index]
	delete(st.running, o.index)
	st.s.release(o.id)
	timedOut := r != nil && r.expired
	if st.succeeded.Has(o.index) || st.failed.Has(o.index) || st.res.Reason != "" {
		return
	}
	if o.exitCode == 0 && !timedOut {
		st.succeeded = st.succeeded.WithSorted([]int{o.index})
		return
	}
	code := o.exitCode
	if timedOut {
		code = ExitTimedOut
	}
	st.res.Failures++
	m := podfailurepolicy.Match(st.g.FailurePolicy, &podfailurepolicy.Failure{
		Name:       st.g.Name + "-" + strconv.Itoa(o.index),
		Containers: []podfailurepolicy.Container{{Name: ContainerName, ExitCode: code}},
	})
	if m.Matched && m.Action == podfailurepolicy.ActionFailJob {
		st.res.Reason, st.res.Message = "PodFailurePolicy", m.Message
		st.failed = st.failed.WithSorted([]int{o.index})
		return
	}
	prev := st.counts[o.index]
	ignored := !m.CountsTowardBackoff
	if indexes.IndexFailed(indexes.IndexFailure{
		FailIndex:            m.Matched && m.Action == podfailurepolicy.ActionFailIndex,
		Ignored:              ignored,
		Count:                prev,
		BackoffLimitPerIndex: st.g.RetriesPerIndex,
	}) {
		st.failed = st.failed.WithSorted([]int{o.index})
		return
	}
	st.counts[o.index] = indexes.NextFailureCount(prev, ignored)
	st.lastFailure[o.index] = now
	st.lastFailedCount[o.index] = prev
}

// stopAll cancels the runs still going; their outcomes are drained by Run.
func (st *group) stopAll() {
	for ix, r := range st.running {
		r.cancel()
		st.s.release(r.id)
		delete(st.running, ix)
	}
}
