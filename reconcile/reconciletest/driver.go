package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// defaultStepDuration is how far a Driver step moves the clock by default.
const defaultStepDuration = time.Second

// ErrStepLimit is returned by Driver.Run when the owner has not finished within
// the step limit, and by RunLatency when the Job is not Complete within
// LatencyOptions.Limit.
var ErrStepLimit = errors.New("reconciletest: limit reached before the owner finished")

// Driver runs a Reconciler against a Cluster one deterministic step at a time, for
// tests of controllers built on jobkit. Its owners are those of the Cluster's
// Store of the kind it serves: the Cluster's Jobs (Cluster.Jobs), or, for a
// Cluster of another Options.Owner, the Store NewStore made, of any type and any
// shape. Each step:
//
//  1. delivers the watch events that are due to the Cache, whose handlers feed
//     Reconciler.ObservePodEvent (with the cached owners' facts, as production
//     reads them: reconcile.Type.OrphanOwner) and ObserveOwnerEvent (the
//     owners' events, reconcile.Type.Owner);
//  2. syncs the owner namespace/name as the Cache shows it, in its shape
//     (Reconciler.Sync for a Job-shaped owner, SyncRoles for an owner of roles,
//     SyncChildJobs for a group of child Jobs, with the children run by the
//     Store's Job controller); one missing from the Cache is forgotten;
//  3. runs a Kubelet step (its script);
//  4. advances the clock by StepDuration.
//
// Run stops when the owner is done (Store.DoneFunc's test). The Reconciler is
// New with the Cluster as pod client, and as StatusWriter (the Cluster writes a
// Job's status and a Job-shaped owner's through its Store) or
// reconcile.JobStatusWriter(c), or the Store; its Config.Owner is the Cluster's
// Options.Owner. SyncFunc and DoneFunc replace the sync and the "done" test for
// a controller that is not a plain Reconciler.
//
// Every step syncs, whatever the Result asked: a Driver checks what a controller
// does, not how a workqueue schedules it.
type Driver struct {
	Cluster *Cluster
	// Reconciler syncs the owner and hears the Cache's events; it may be nil when
	// SyncFunc is set. It serves the Cluster's owner kind: its Config.Owner is the
	// Cluster's Options.Owner (owner.BatchJob for Jobs).
	Reconciler *reconcile.Reconciler
	// StepDuration is how far each step moves the clock; zero means 1s.
	StepDuration time.Duration
	// OnStep, when set, is called after each step (for progress output).
	OnStep func(StepResult)
	// SyncFunc, when set, is the sync of each step in place of the Reconciler's: the
	// user's controller syncs namespace/name from the Cache and says whether it
	// found the owner there.
	SyncFunc func(ctx context.Context, namespace, name string) (synced bool, res reconcile.Result, err error)
	// DoneFunc, when set, decides when Run stops in place of Done: exists false
	// (the owner is gone from the cluster) ends Run with an error, done true ends
	// it successfully.
	DoneFunc func(namespace, name string) (done, exists bool)

	step int
}

// StepResult is what one Driver step did.
type StepResult struct {
	// Step counts the steps of the Driver from 1.
	Step int
	// Workload is the owner as stored after the step, as production's readers
	// see it (reconcile.Type.Owner; Object is the stored object: a
	// *batchv1.Job, or the T of the Cluster's Store); nil when it does not exist.
	Workload *plan.Workload
	// Result and Err are what the sync returned; Synced is false when the owner was
	// not in the Cache.
	Synced bool
	Result reconcile.Result
	Err    error
	// Delivered counts the watch events delivered before the sync.
	Delivered int
}

// NewDriver returns a Driver and registers the Reconciler's event handlers on the
// Cluster's Cache and on the Store of its owners (r may be nil: see
// Driver.SyncFunc).
func NewDriver(c *Cluster, r *reconcile.Reconciler) *Driver {
	d := &Driver{Cluster: c, Reconciler: r}
	// The handlers read d.Reconciler at each event, so that Restart takes effect.
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		if d.Reconciler != nil {
			d.Reconciler.ObservePodEvent(ev, d.lookup)
		}
	})
	if src := c.owners(); src != nil {
		c.mu.Lock()
		src.onEventLocked(d.observeOwner)
		c.mu.Unlock()
	}
	return d
}

func (d *Driver) observeOwner(ev reconcile.OwnerEvent) {
	if d.Reconciler != nil {
		d.Reconciler.ObserveOwnerEvent(ev)
	}
}

// kind returns the owner kind the Driver syncs: the Cluster's (Options.Owner), which
// the Reconciler serves (its Config.Owner).
func (d *Driver) kind() owner.Kind { return d.Cluster.Owner() }

// lookup is the Driver's reconcile.OwnerLookup: the cached owners' facts.
func (d *Driver) lookup(namespace, name string) *finalizers.OrphanOwner {
	if src := d.Cluster.owners(); src != nil {
		return src.cachedFacts(namespace, name)
	}
	return nil
}

// Restart models a restart of the controller under test; the cluster keeps its
// state. The Cache starts over as a new informer (Cache.Reset: the pending watch
// events are gone and the next delivery lists the cluster anew), and:
//
//   - with a non-nil r, r replaces the Driver's Reconciler: a new process, whose
//     Reconciler (New with a Config whose Expectations, FinalizerRemovals and
//     BackoffStore are nil) knows nothing of the writes made before;
//   - with nil, the Reconciler is kept with all it remembers: only the informers
//     restart, as when a watch breaks and is listed again, or a controller whose
//     state lives outside the Reconciler (SyncFunc) restarts it itself before
//     calling Restart(nil).
func (d *Driver) Restart(r *reconcile.Reconciler) {
	if r != nil {
		d.Reconciler = r
	}
	d.Cluster.Cache().Reset()
}

// Sync syncs the owner namespace/name as cached (through SyncFunc when set), without
// delivering events or moving the clock. An owner missing from the Cache is
// forgotten and not synced.
func (d *Driver) Sync(ctx context.Context, namespace, name string) (synced bool, res reconcile.Result, err error) {
	if d.SyncFunc != nil {
		return d.SyncFunc(ctx, namespace, name)
	}
	src := d.Cluster.owners()
	if src == nil {
		d.Reconciler.Forget(reconcile.Key(namespace, name))
		return false, reconcile.Result{}, nil
	}
	return src.sync(ctx, d.Reconciler, namespace, name, true)
}

// Step runs one step for the owner namespace/name. Sync errors are reported in the
// StepResult, not returned; the error is the Kubelet script's.
func (d *Driver) Step(ctx context.Context, namespace, name string) (StepResult, error) {
	d.step++
	sr := StepResult{Step: d.step}
	sr.Delivered = d.Cluster.Cache().DeliverDue()
	sr.Synced, sr.Result, sr.Err = d.Sync(ctx, namespace, name)
	kerr := d.Cluster.Kubelet().Step()
	if src := d.Cluster.owners(); src != nil {
		sr.Workload = src.workload(namespace, name)
	}
	step := d.StepDuration
	if step <= 0 {
		step = defaultStepDuration
	}
	d.Cluster.Clock().Step(step)
	if d.OnStep != nil {
		d.OnStep(sr)
	}
	return sr, kerr
}

// RunResult is the outcome of Driver.Run.
type RunResult struct {
	// Steps is the number of steps run.
	Steps int
	// Workload is the owner as stored at the end (StepResult.Workload).
	Workload *plan.Workload
	// SyncErrors counts the syncs that returned an error (the run goes on, as a
	// workqueue would retry).
	SyncErrors int
	// LastError is the last sync error, if any.
	LastError error
}

// Run steps until the owner is done (Done; DoneFunc decides instead when set), or until maxSteps steps (0 means 1000) have run, which returns ErrStepLimit
// with the state reached. A Kubelet script error, an owner gone from the cluster or a
// cancelled ctx also ends the run.
func (d *Driver) Run(ctx context.Context, namespace, name string, maxSteps int) (RunResult, error) {
	if maxSteps <= 0 {
		maxSteps = 1000
	}
	var rr RunResult
	for rr.Steps < maxSteps {
		if err := ctx.Err(); err != nil {
			return rr, err
		}
		sr, err := d.Step(ctx, namespace, name)
		rr.Steps++
		rr.Workload = sr.Workload
		if sr.Err != nil {
			rr.SyncErrors++
			rr.LastError = sr.Err
		}
		if err != nil {
			return rr, err
		}
		done, exists := d.done(namespace, name)
		if !exists {
			return rr, fmt.Errorf("reconciletest: %v %s/%s no longer exists", d.kind(), namespace, name)
		}
		if done {
			return rr, nil
		}
	}
	return rr, fmt.Errorf("%w (%d steps); %s", ErrStepLimit, maxSteps, d.describe(rr))
}

// done applies DoneFunc, or the test of the owners' Store.
func (d *Driver) done(namespace, name string) (done, exists bool) {
	switch src := d.Cluster.owners(); {
	case d.DoneFunc != nil:
		return d.DoneFunc(namespace, name)
	case src != nil:
		return src.done(namespace, name)
	}
	return false, false
}

// describe summarises the owner at the end of a run for ErrStepLimit.
func (d *Driver) describe(rr RunResult) string {
	if w := rr.Workload; w != nil {
		return fmt.Sprintf("%s status: %+v%s", d.kind().Kind, w.Status, d.Cluster.describePods(w.Namespace, w.UID))
	}
	return "owner unknown"
}

// Done reports whether the owner namespace/name, as stored, is done, as Run
// decides without DoneFunc (Store.DoneFunc): it has finished and nothing of it
// is left to count or stop (for a Job-shaped owner, none of its pods carries
// the tracking finalizer of the Driver's owner kind).
func (d *Driver) Done(namespace, name string) bool {
	src := d.Cluster.owners()
	if src == nil {
		return false
	}
	done, _ := src.done(namespace, name)
	return done
}
