package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/jobstatus"
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
//     Reconciler.ObservePodEvent and ObserveJobEvent;
//  2. syncs the Job from the Cache (a Job missing from the Cache is forgotten);
//  3. runs a Kubelet step (its script);
//  4. advances the clock by StepDuration.
//
// Every step syncs, whatever the Result asked: a Driver checks what a controller
// does, not how a workqueue schedules it.
type Driver struct {
	Cluster    *Cluster
	Reconciler *reconcile.Reconciler
	// StepDuration is how far each step moves the clock; zero means 1s.
	StepDuration time.Duration
	// OnStep, when set, is called after each step (for progress output).
	OnStep func(StepResult)

	step int
}

// StepResult is what one Driver step did.
type StepResult struct {
	// Step counts the steps of the Driver from 1.
	Step int
	// Job is the Job in the cluster after the step (nil when it does not exist).
	Job *batchv1.Job
	// Result and Err are what the sync returned; Synced is false when the Job was not
	// in the Cache.
	Synced bool
	Result reconcile.Result
	Err    error
	// Delivered counts the watch events delivered before the sync.
	Delivered int
}

// NewDriver returns a Driver and registers the Reconciler's event handlers on the
// Cluster's Cache.
func NewDriver(c *Cluster, r *reconcile.Reconciler) *Driver {
	d := &Driver{Cluster: c, Reconciler: r}
	cache := c.Cache()
	// The handlers read d.Reconciler at each event, so that Restart takes effect.
	cache.OnPodEvent(func(ev reconcile.PodEvent) { d.Reconciler.ObservePodEvent(ev, cache.Job) })
	cache.OnJobEvent(func(ev reconcile.JobEvent) { d.Reconciler.ObserveJobEvent(ev) })
	return d
}

// Restart models a controller restart: r (typically a new Reconciler with new
// stores) replaces the Driver's, and the Cache starts over as a new informer
// (Cache.Reset). The cluster keeps its state.
func (d *Driver) Restart(r *reconcile.Reconciler) {
	d.Reconciler = r
	d.Cluster.Cache().Reset()
}

// Sync syncs the Job namespace/name as cached, without delivering events or moving
// the clock. A Job missing from the Cache is forgotten and not synced.
func (d *Driver) Sync(ctx context.Context, namespace, name string) (synced bool, res reconcile.Result, err error) {
	job := d.Cluster.Cache().Job(namespace, name)
	if job == nil {
		d.Reconciler.Forget(reconcile.KeyFor(namespace, name))
		return false, reconcile.Result{}, nil
	}
	res, err = d.Reconciler.SyncWith(ctx, job, d.Cluster.Cache().PodsForJob)
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
	sr.Job, _ = d.Cluster.GetJob(ctx, namespace, name)
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
	// Steps is the number of steps run; Job the Job in the cluster at the end.
	Steps int
	Job   *batchv1.Job
	// SyncErrors counts the syncs that returned an error (the run goes on, as a
	// workqueue would retry).
	SyncErrors int
	// LastError is the last sync error, if any.
	LastError error
}

// Run steps until the Job has a Complete or Failed condition and none of its pods
// carries the tracking finalizer, or until maxSteps steps (0 means 1000) have run,
// which returns ErrStepLimit with the state reached. A Kubelet script error or a
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
		rr.Job = sr.Job
		if sr.Err != nil {
			rr.SyncErrors++
			rr.LastError = sr.Err
		}
		if err != nil {
			return rr, err
		}
		if sr.Job == nil {
			return rr, fmt.Errorf("reconciletest: job %s/%s no longer exists", namespace, name)
		}
		if d.Done(sr.Job) {
			return rr, nil
		}
	}
	return rr, fmt.Errorf("%w (%d steps); job status: %+v%s", ErrStepLimit, maxSteps, rr.Job.Status, d.Cluster.describeJobPods(rr.Job))
}

// Done reports whether job (as stored) is finished and none of its pods in the
// cluster still carries the tracking finalizer.
func (d *Driver) Done(job *batchv1.Job) bool {
	if job == nil || !jobstatus.IsFinished(&job.Status) {
		return false
	}
	for _, p := range d.Cluster.ListPods(job.Namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == job.UID && d.tracked(p) {
			return false
		}
	}
	return true
}

// tracked reports whether p carries the tracking finalizer of the Reconciler's owner
// kind (the batch/v1 Job's without a Reconciler).
func (d *Driver) tracked(p *corev1.Pod) bool {
	if d.Reconciler == nil {
		return finalizers.Has(p)
	}
	return d.Reconciler.Config().Owner.HasFinalizer(p)
}

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
