package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/jobstatus"
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
// tests of controllers built on jobkit. Each step:
//
//  1. delivers the watch events that are due to the Cache, whose handlers feed
//     Reconciler.ObservePodEvent (with the owners' facts: the cached Jobs, the
//     cached Tasks, or the test's store), ObserveOwnerEvent on Job events, and
//     ObserveOwnerEvent on Task deletions and replacements;
//  2. syncs the owner from the Cache (one missing from the Cache is forgotten);
//  3. runs a Kubelet step (its script);
//  4. advances the clock by StepDuration.
//
// The owner is a batch/v1 Job when the Cluster holds Jobs only, and a Task when its
// Options.Owner names another kind: namespace and name then name a Task, synced with
// Sync (the Reconciler is then New with the Cluster as pod client and
// StatusWriter, and Config.Owner the Cluster's kind), and StepResult and RunResult
// carry it in Task. With Options.Owners, the owner is whatever the test's own store
// holds under namespace/name, of the test's own type: each step syncs the Workload
// the store returns, pod events and the orphan cleanup read the owner's facts from
// it, and Run stops when it is finished with no tracked pod left (StepResult and
// RunResult carry it in Workload). The store has no watch: a test that deletes an
// owner from it tells the Reconciler (ObserveOwnerEvent with Old only), as the
// controller's owner event handler would; a sync that finds nothing in the store
// forgets the key.
// SyncFunc and DoneFunc replace the sync and the "done" test for a controller that
// is not a plain Reconciler.
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
	// DoneFunc, when set, decides when Run stops in place of Done or DoneTask:
	// exists false (the owner is gone from the cluster) ends Run with an error, done
	// true ends it successfully.
	DoneFunc func(namespace, name string) (done, exists bool)

	step int
}

// StepResult is what one Driver step did.
type StepResult struct {
	// Step counts the steps of the Driver from 1.
	Step int
	// Job is the Job in the cluster after the step (nil when it does not exist, or
	// when the Driver syncs Tasks).
	Job *batchv1.Job
	// Task is the Task in the cluster after the step, when the Driver syncs Tasks
	// (nil when it does not exist).
	Task *Task
	// Workload is the owner as the test's store (Options.Owners) holds it after the
	// step, when the Cluster has one (nil when the store holds nothing there).
	Workload *plan.Workload
	// Result and Err are what the sync returned; Synced is false when the Job was not
	// in the Cache.
	Synced bool
	Result reconcile.Result
	Err    error
	// Delivered counts the watch events delivered before the sync.
	Delivered int
}

// NewDriver returns a Driver and registers the Reconciler's event handlers on the
// Cluster's Cache (r may be nil: see Driver.SyncFunc).
func NewDriver(c *Cluster, r *reconcile.Reconciler) *Driver {
	d := &Driver{Cluster: c, Reconciler: r}
	cache := c.Cache()
	// The handlers read d.Reconciler at each event, so that Restart takes effect.
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		if d.Reconciler != nil {
			d.Reconciler.ObservePodEvent(ev, d.lookup())
		}
	})
	cache.OnJobEvent(func(ev reconcile.OwnerEvent) {
		if d.Reconciler != nil {
			d.Reconciler.ObserveOwnerEvent(ev)
		}
	})
	cache.OnTaskEvent(func(old, cur *Task) {
		if d.Reconciler == nil || old == nil || (cur != nil && cur.UID == old.UID) {
			return
		}
		// Deleted, or replaced under the same name.
		d.Reconciler.ObserveOwnerEvent(reconcile.OwnerEvent{Old: old.Workload()})
	})
	return d
}

// kind returns the owner kind the Driver syncs: the Cluster's (Options.Owner), which
// the Reconciler serves (its Config.Owner).
func (d *Driver) kind() owner.Kind { return d.Cluster.Owner() }

// tasks reports whether the Driver syncs Tasks rather than Jobs: whether the
// Cluster holds Tasks (Options.Owner without Options.Owners).
func (d *Driver) tasks() bool { return d.Cluster.owner != owner.BatchJob && d.Cluster.owners == nil }

// lookup returns what the Driver's owners are, for pod events and orphans: the
// cached Jobs, the cached Tasks, or the test's store (Options.Owners).
func (d *Driver) lookup() reconcile.OwnerLookup {
	switch {
	case d.Cluster.owners != nil:
		return func(namespace, name string) *finalizers.OrphanOwner {
			return workloadOwner(d.Cluster.owners(namespace, name), d.kind())
		}
	case d.tasks():
		return d.Cluster.Cache().TaskOwner
	}
	return d.Cluster.Cache().JobOwner
}

// workloadOwner returns the orphan facts of w, an owner of kind
// (plan.Workload.OrphanOwner), nil for a nil w.
func workloadOwner(w *plan.Workload, kind owner.Kind) *finalizers.OrphanOwner {
	if w == nil {
		return nil
	}
	return w.OrphanOwner(kind)
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
	if d.Cluster.owners != nil {
		w := d.Cluster.owners(namespace, name)
		if w == nil {
			d.Reconciler.Forget(reconcile.Key(namespace, name))
			return false, reconcile.Result{}, nil
		}
		res, err = d.Reconciler.Sync(ctx, w, d.Cluster.Cache().OwnerPods)
		return true, res, err
	}
	if d.tasks() {
		t := d.Cluster.Cache().Task(namespace, name)
		if t == nil {
			d.Reconciler.Forget(reconcile.Key(namespace, name))
			return false, reconcile.Result{}, nil
		}
		res, err = d.Reconciler.Sync(ctx, t.Workload(), d.Cluster.Cache().OwnerPods)
		return true, res, err
	}
	job := d.Cluster.Cache().Job(namespace, name)
	if job == nil {
		d.Reconciler.Forget(reconcile.Key(namespace, name))
		return false, reconcile.Result{}, nil
	}
	res, err = d.Reconciler.Sync(ctx, plan.JobWorkload(job), d.Cluster.Cache().OwnerPods)
	return true, res, err
}

// Step runs one step for the Job namespace/name. Sync errors are reported in the
// StepResult, not returned; the error is the Kubelet script's.
func (d *Driver) Step(ctx context.Context, namespace, name string) (StepResult, error) {
	d.step++
	sr := StepResult{Step: d.step}
	sr.Delivered = d.Cluster.Cache().DeliverDue()
	sr.Synced, sr.Result, sr.Err = d.Sync(ctx, namespace, name)
	kerr := d.Cluster.Kubelet().Step()
	switch {
	case d.Cluster.owners != nil:
		sr.Workload = d.Cluster.owners(namespace, name)
	case d.tasks():
		sr.Task, _ = d.Cluster.GetTask(ctx, namespace, name)
	default:
		sr.Job, _ = d.Cluster.GetJob(ctx, namespace, name)
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
	// Steps is the number of steps run; Job the Job (Task the Task, when the Driver
	// syncs Tasks) in the cluster at the end.
	Steps int
	Job   *batchv1.Job
	Task  *Task
	// Workload is the owner as the test's store (Options.Owners) holds it at the
	// end, when the Cluster has one.
	Workload *plan.Workload
	// SyncErrors counts the syncs that returned an error (the run goes on, as a
	// workqueue would retry).
	SyncErrors int
	// LastError is the last sync error, if any.
	LastError error
}

// Run steps until the owner (a Job, or a Task) has a Complete or Failed condition
// and none of its pods carries the tracking finalizer (DoneFunc decides instead when
// set), or until maxSteps steps (0 means 1000) have run, which returns ErrStepLimit
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
		rr.Job, rr.Task, rr.Workload = sr.Job, sr.Task, sr.Workload
		if sr.Err != nil {
			rr.SyncErrors++
			rr.LastError = sr.Err
		}
		if err != nil {
			return rr, err
		}
		done, exists := d.done(namespace, name, sr)
		if !exists {
			return rr, fmt.Errorf("reconciletest: %v %s/%s no longer exists", d.kind(), namespace, name)
		}
		if done {
			return rr, nil
		}
	}
	return rr, fmt.Errorf("%w (%d steps); %s", ErrStepLimit, maxSteps, d.describe(rr))
}

// done applies DoneFunc, DoneTask or Done to the state after a step.
func (d *Driver) done(namespace, name string, sr StepResult) (done, exists bool) {
	switch {
	case d.DoneFunc != nil:
		return d.DoneFunc(namespace, name)
	case d.Cluster.owners != nil:
		w := sr.Workload
		return w != nil && d.finished(w.Namespace, w.UID, &w.Status), w != nil
	case d.tasks():
		return d.DoneTask(sr.Task), sr.Task != nil
	}
	return d.Done(sr.Job), sr.Job != nil
}

// describe summarises the owner at the end of a run for ErrStepLimit.
func (d *Driver) describe(rr RunResult) string {
	switch {
	case rr.Job != nil:
		return fmt.Sprintf("job status: %+v%s", rr.Job.Status, d.Cluster.describePods(rr.Job.Namespace, rr.Job.UID))
	case rr.Task != nil:
		return fmt.Sprintf("%s status: %+v%s", rr.Task.Kind, rr.Task.Status, d.Cluster.describePods(rr.Task.Namespace, rr.Task.UID))
	case rr.Workload != nil:
		return fmt.Sprintf("%s status: %+v%s", d.kind().Kind, rr.Workload.Status, d.Cluster.describePods(rr.Workload.Namespace, rr.Workload.UID))
	}
	return "owner unknown"
}

// Done reports whether job (as stored) is finished and none of its pods in the
// cluster still carries the tracking finalizer.
func (d *Driver) Done(job *batchv1.Job) bool {
	return job != nil && d.finished(job.Namespace, job.UID, &job.Status)
}

// DoneTask is Done for a Task: finished, and none of its pods carries the tracking
// finalizer of the Reconciler's owner kind.
func (d *Driver) DoneTask(t *Task) bool {
	return t != nil && d.finished(t.Namespace, t.UID, &t.Status)
}

func (d *Driver) finished(namespace string, uid types.UID, st *batchv1.JobStatus) bool {
	if !jobstatus.IsFinished(st) {
		return false
	}
	for _, p := range d.Cluster.ListPods(namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == uid && d.tracked(p) {
			return false
		}
	}
	return true
}

// tracked reports whether p carries the tracking finalizer of the owner kind the
// Driver syncs.
func (d *Driver) tracked(p *corev1.Pod) bool { return d.kind().HasFinalizer(p) }
