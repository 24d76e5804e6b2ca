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

// DefaultStepDuration is how far a Driver step moves the clock by default.
const DefaultStepDuration = time.Second

// ErrStepLimit is returned by Driver.Run when the Job has not finished within the
// step limit.
var ErrStepLimit = errors.New("reconciletest: step limit reached before the job finished")

// Driver runs a Reconciler against a Cluster one deterministic step at a time, for
// tests of controllers built on jobkit. Each step:
//
//  1. delivers the watch events that are due to the Cache, whose handlers feed
//     Reconciler.ObservePodEvent and ObserveOwnerEvent (for a Reconciler of another
//     owner kind: ObservePodEventOf, and OwnerDeleted on Task events);
//  2. syncs the owner from the Cache (one missing from the Cache is forgotten);
//  3. runs a Kubelet step (its script);
//  4. advances the clock by StepDuration.
//
// The owner is a batch/v1 Job when the Cluster holds Jobs only, and a Task when its
// Options.Owner names another kind: namespace and name then name a Task, synced with
// Sync (the Reconciler is then New with the Cluster as pod client and
// StatusWriter, and Config.Owner the Cluster's kind), and StepResult and RunResult
// carry it in Task. SyncFunc and DoneFunc replace the sync and the
// "done" test for a controller that is not a plain Reconciler.
//
// Every step syncs, whatever the Result asked: a Driver checks what a controller
// does, not how a workqueue schedules it.
type Driver struct {
	Cluster *Cluster
	// Reconciler syncs the owner and hears the Cache's events; it may be nil when
	// SyncFunc is set.
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
		switch {
		case d.Reconciler == nil:
		case d.tasks():
			d.Reconciler.ObservePodEvent(ev, cache.TaskOwner)
		default:
			d.Reconciler.ObservePodEvent(ev, cache.JobOwner)
		}
	})
	cache.OnJobEvent(func(ev reconcile.OwnerEvent) {
		if d.Reconciler != nil {
			d.Reconciler.ObserveOwnerEvent(ev)
		}
	})
	cache.OnTaskEvent(func(ev TaskEvent) {
		if d.Reconciler == nil || ev.Old == nil || (ev.New != nil && ev.New.UID == ev.Old.UID) {
			return
		}
		// Deleted, or replaced under the same name.
		d.Reconciler.OwnerDeleted(ev.Old.Namespace, ev.Old.Name, ev.Old.UID)
	})
	return d
}

// kind returns the owner kind the Driver syncs: the Reconciler's, or the Cluster's
// without a Reconciler.
func (d *Driver) kind() owner.Kind {
	if d.Reconciler == nil {
		return d.Cluster.Owner()
	}
	return d.Reconciler.Config().Owner
}

// tasks reports whether the Driver syncs Tasks rather than Jobs: whether the
// Cluster holds Tasks (Options.Owner).
func (d *Driver) tasks() bool { return d.Cluster.Owner() != owner.BatchJob }

// Restart models a controller restart: r (typically a new Reconciler with new
// stores) replaces the Driver's, and the Cache starts over as a new informer
// (Cache.Reset). The cluster keeps its state.
func (d *Driver) Restart(r *reconcile.Reconciler) {
	d.Reconciler = r
	d.Cluster.Cache().Reset()
}

// Sync syncs the owner namespace/name as cached (through SyncFunc when set), without
// delivering events or moving the clock. An owner missing from the Cache is
// forgotten and not synced.
func (d *Driver) Sync(ctx context.Context, namespace, name string) (synced bool, res reconcile.Result, err error) {
	if d.SyncFunc != nil {
		return d.SyncFunc(ctx, namespace, name)
	}
	if d.tasks() {
		t := d.Cluster.Cache().Task(namespace, name)
		if t == nil {
			d.Reconciler.Forget(reconcile.Key(namespace, name))
			return false, reconcile.Result{}, nil
		}
		res, err = d.Reconciler.Sync(ctx, TaskWorkload(t), d.Cluster.Cache().PodsFor)
		return true, res, err
	}
	job := d.Cluster.Cache().Job(namespace, name)
	if job == nil {
		d.Reconciler.Forget(reconcile.Key(namespace, name))
		return false, reconcile.Result{}, nil
	}
	res, err = d.Reconciler.Sync(ctx, plan.JobWorkload(job), d.Cluster.Cache().PodsFor)
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
	if d.tasks() {
		sr.Task, _ = d.Cluster.GetTask(ctx, namespace, name)
	} else {
		sr.Job, _ = d.Cluster.GetJob(ctx, namespace, name)
	}
	step := d.StepDuration
	if step <= 0 {
		step = DefaultStepDuration
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
		rr.Job, rr.Task = sr.Job, sr.Task
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

// CleanOrphans runs the orphan cleanup once over the cached pods that carry the
// tracking finalizer of the Reconciler's owner kind: each goes to
// Reconciler.CleanOrphanOf with the facts of the owner its controller reference
// names (a Job, or a Task), read from the Cache and, when the Cache has none,
// confirmed with a read from the Cluster (a pod can reach a cache before its owner).
// It returns how many finalizers it removed, and the errors of the others.
func (d *Driver) CleanOrphans(ctx context.Context) (int, error) {
	if d.Reconciler == nil {
		return 0, fmt.Errorf("%w: CleanOrphans needs a Reconciler", reconcile.ErrInvalidArgument)
	}
	kind := d.kind()
	cache := d.Cluster.Cache()
	n := 0
	var errs []error
	for _, p := range cache.Pods("") {
		if !kind.HasFinalizer(p) {
			continue
		}
		var own *finalizers.OrphanOwner
		if ref := kind.ControllerOf(p); ref != nil {
			own = d.ownerFacts(ctx, p.Namespace, ref.Name)
		}
		dec, err := d.Reconciler.CleanOrphan(ctx, p, own)
		switch {
		case err != nil:
			errs = append(errs, err)
		case dec.Remove:
			n++
		}
	}
	return n, errors.Join(errs...)
}

// ownerFacts returns the orphan facts of the owner namespace/name from the Cache or,
// failing that, the Cluster; nil when neither has it.
func (d *Driver) ownerFacts(ctx context.Context, namespace, name string) *finalizers.OrphanOwner {
	cache := d.Cluster.Cache()
	if d.tasks() {
		if t := cache.Task(namespace, name); t != nil {
			return TaskOwner(t)
		}
		t, _ := d.Cluster.GetTask(ctx, namespace, name)
		return TaskOwner(t)
	}
	if j := cache.Job(namespace, name); j != nil {
		return finalizers.JobOwner(j)
	}
	j, _ := d.Cluster.GetJob(ctx, namespace, name)
	return finalizers.JobOwner(j)
}

// tracked reports whether p carries the tracking finalizer of the owner kind the
// Driver syncs.
func (d *Driver) tracked(p *corev1.Pod) bool { return d.kind().HasFinalizer(p) }

// CountPods counts the stored pods controlled by job, by phase.
func (c *Cluster) CountPods(job *batchv1.Job) map[corev1.PodPhase]int {
	out := map[corev1.PodPhase]int{}
	for _, p := range c.ListPods(job.Namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == job.UID {
			out[p.Status.Phase]++
		}
	}
	return out
}
