package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// ControllerName is the spec.managedBy of simulated Jobs and the name of the
// simulated controller.
const ControllerName = "sim.jobkit.dev/job-controller"

// Invariant names a checked property.
type Invariant string

// The invariants; the package documentation states each.
const (
	// InvCount: the counters, completedIndexes and failedIndexes follow the model.
	InvCount Invariant = "count"
	// InvCountedTwice: a UID entered an uncounted list after it was counted.
	InvCountedTwice Invariant = "counted-twice"
	// InvRecordFirst: a pod lost its finalizer before it was recorded, or was
	// counted before it lost its finalizer.
	InvRecordFirst Invariant = "record-first"
	// InvBackwards: a counter or an index list went back.
	InvBackwards Invariant = "backwards"
	// InvInvalidStatus: the API server refused a status write.
	InvInvalidStatus Invariant = "invalid-status"
	// InvSucceededIndexCreated: a pod was created for a completed index.
	InvSucceededIndexCreated Invariant = "succeeded-index-created"
	// InvDuplicateIndex: an index had two active pods long after any fault.
	InvDuplicateIndex Invariant = "duplicate-index"
	// InvOverParallelism: more active pods than parallelism long after any fault.
	InvOverParallelism Invariant = "over-parallelism"
	// InvNotFinished: the Job had no terminal condition at the end.
	InvNotFinished Invariant = "not-finished"
	// InvFinalizerLeft: a pod still carried the tracking finalizer at the end.
	InvFinalizerLeft Invariant = "finalizer-left"
	// InvUncountedLeft: the finished Job still had uncounted pods.
	InvUncountedLeft Invariant = "uncounted-left"
	// InvWrongOwner: a pod created for the owner has a controller reference to
	// another kind, or carries the tracking finalizer of another kind.
	InvWrongOwner Invariant = "wrong-owner"
	// InvAdoption: an adopted pod lacks the tracking finalizer, does not match the
	// selector, or was adopted by an owner already deleted.
	InvAdoption Invariant = "adoption"
	// InvReleased: a released pod kept the tracking finalizer, or entered an
	// uncounted list after its release.
	InvReleased Invariant = "released"
	// InvCreatedAfterDelete: a pod was created for the owner after its deletion,
	// other than by a sync whose cache still showed the owner.
	InvCreatedAfterDelete Invariant = "created-after-delete"
	// InvTwoLivePods: a pod was created for an index that held a live pod of the
	// owner.
	InvTwoLivePods Invariant = "two-live-pods"
)

// Violation is a broken invariant.
type Violation struct {
	Invariant Invariant
	// Action is the position in the trace of the action during or after which the
	// violation was found; Sync counts the syncs run until then.
	Action, Sync int
	Message      string
}

// String renders the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s (action %d, sync %d): %s", v.Invariant, v.Action, v.Sync, v.Message)
}

// cleanSyncs is how many syncs that see everything the controller wrote may pass
// after a fault that hid its writes before duplicates and excess pods must be gone.
const cleanSyncs = 3

// world runs the actions of a trace against an in-memory cluster.
type world struct {
	tr    *Trace // actions run so far are appended to it
	ns    string
	name  string
	kind  owner.Kind // the owner's kind: owner.BatchJob, or the Tasks' (Trace.Owner)
	tasks bool       // the owner is a reconciletest.Task
	// ctlKind is the owner kind the controller is configured with: kind, except in
	// tests of a broken controller.
	ctlKind owner.Kind
	clock   *clocktesting.FakeClock
	cluster *reconciletest.Cluster
	r       *reconcile.Reconciler
	model   *model

	// The sync in progress.
	inSync     bool
	cur        *Action
	calls      int
	creates    int
	faulted    bool
	crashAfter int
	draw       func(call reconciletest.Call, creates int) (FaultKind, bool) // nil: replay
	// syncOwner is the UID of the owner the sync in progress read from the cache.
	syncOwner types.UID

	// orphans counts the orphans created (VerbOrphan), which names them.
	orphans int

	faults     Counts
	violations []Violation
	syncs      int
	// clean counts the syncs since the last fault that hid the controller's writes,
	// among those that ran with a fully delivered cache and no fault.
	clean int
	// stopped is set by the first violation: the run ends there.
	stopped bool
	// acting is the position in the trace of the action being run.
	acting int
	// debug, when set, receives a description of every sync.
	debug func(string)
}

func newWorld(tr *Trace) (*world, error) {
	kind := owner.BatchJob
	if tr.Owner != nil && *tr.Owner != (owner.Kind{}) {
		kind = *tr.Owner
	}
	if err := kind.Validate(); err != nil {
		return nil, fmt.Errorf("sim: trace owner: %w", err)
	}
	tasks := kind != owner.BatchJob
	clk := clocktesting.NewFakeClock(reconciletest.DefaultStart)
	opts := reconciletest.Options{Clock: clk, Seed: tr.Seed}
	if tasks {
		opts.Owner = kind
	}
	w := &world{
		tr:         &Trace{Seed: tr.Seed, Note: tr.Note, Job: tr.Job, Owner: tr.Owner, Controller: tr.Controller},
		ns:         tr.Job.Namespace,
		name:       tr.Job.Name,
		kind:       kind,
		tasks:      tasks,
		ctlKind:    kind,
		clock:      clk,
		cluster:    reconciletest.NewCluster(opts),
		faults:     Counts{},
		crashAfter: -1,
		clean:      cleanSyncs,
	}
	w.model = newModel(w)
	w.cluster.OnWrite(w.model.observe)
	w.cluster.SetInterceptor(w.intercept)
	cache := w.cluster.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		if w.tasks {
			w.r.ObservePodEvent(ev, cache.TaskOwner)
		} else {
			w.r.ObservePodEvent(ev, cache.JobOwner)
		}
	})
	cache.OnJobEvent(func(ev reconcile.OwnerEvent) { w.r.ObserveOwnerEvent(ev) })
	cache.OnTaskEvent(func(ev reconciletest.TaskEvent) {
		if ev.Old != nil && (ev.New == nil || ev.New.UID != ev.Old.UID) {
			w.r.OwnerDeleted(ev.Old.Namespace, ev.Old.Name, ev.Old.UID)
		}
	})
	r, err := w.newReconciler()
	if err != nil {
		return nil, err
	}
	w.r = r
	job := tr.Job.DeepCopy()
	job.Spec.ManagedBy = ptr.To(ControllerName)
	if tasks {
		_, err = w.cluster.CreateTask(&reconciletest.Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec})
	} else {
		_, err = w.cluster.CreateJob(job)
	}
	if err != nil {
		return nil, fmt.Errorf("sim: create %v: %w", kind, err)
	}
	cache.DeliverAll()
	return w, nil
}

// newReconciler returns the controller: New for a batch/v1 Job, New with the
// cluster as pod client and status writer for a Task; either reads its owner from
// the cluster (not the cache) before adopting, as the example controllers do.
func (w *world) newReconciler() (*reconcile.Reconciler, error) {
	s := w.tr.Controller
	cfg := reconcile.Config{
		Name:                        ControllerName,
		Clock:                       w.clock,
		FinalizerRemovalParallelism: 1,
		MaxCreatesPerSync:           s.MaxCreatesPerSync,
		MaxUncounted:                s.MaxUncounted,
		Backoff:                     plainbackoff.Policy{Base: s.backoffBase(), Max: s.backoffMax()},
		ExpectationsTTL:             s.expectationsTTL(),
	}
	if !w.tasks {
		cfg.ReadOwner = reconcile.JobOwnerReader(w.cluster.GetJob)
		return reconcile.New(cfg, w.cluster, reconcile.JobStatusWriter(w.cluster))
	}
	cfg.Owner = w.ctlKind
	cfg.ReadOwner = reconcile.ObjectOwnerReader(w.cluster.GetTask, func(t *reconciletest.Task) (*plan.Workload, error) { return reconciletest.TaskWorkload(t), nil })
	return reconcile.New(cfg, w.cluster, w.cluster)
}

// cachedOwner returns the owner as the controller's cache shows it, presented as a
// Job (a Task's spec and status are a Job's), and its Workload; nil when the cache
// does not have it.
func (w *world) cachedOwner() (*batchv1.Job, *plan.Workload) {
	cache := w.cluster.Cache()
	if w.tasks {
		t := cache.Task(w.ns, w.name)
		if t == nil {
			return nil, nil
		}
		return jobView(t), reconciletest.TaskWorkload(t)
	}
	j := cache.Job(w.ns, w.name)
	if j == nil {
		return nil, nil
	}
	return j, plan.JobWorkload(j)
}

// jobView presents a Task as a Job sharing its metadata, spec and status: what the
// model reads.
func jobView(t *reconciletest.Task) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: t.ObjectMeta, Spec: t.Spec, Status: t.Status}
}

// updateSpec changes the owner's spec as its user would.
func (w *world) updateSpec(f func(*batchv1.JobSpec)) error {
	if w.tasks {
		_, err := w.cluster.UpdateTask(w.ns, w.name, func(t *reconciletest.Task) { f(&t.Spec) })
		return err
	}
	_, err := w.cluster.UpdateJob(w.ns, w.name, func(j *batchv1.Job) { f(&j.Spec) })
	return err
}

// pod returns the model's record of the pod with ordinal n, or nil.
func (w *world) pod(n int) *podState {
	if n < 1 || n > len(w.model.order) {
		return nil
	}
	return w.model.order[n-1]
}

// do runs one action and appends it to the trace. Actions that cannot apply (a pod
// that is gone, a kubelet move the pod cannot make) do nothing, so that a trace
// with actions removed still replays.
func (w *world) do(a Action) {
	if w.stopped {
		return
	}
	w.acting = len(w.tr.Actions)
	if w.debug != nil && a.Do != VerbSync {
		w.debug(fmt.Sprintf("%d %s", w.acting, a))
	}
	c := w.cluster
	k := c.Kubelet()
	cache := c.Cache()
	// A pod being deleted only ever stops as Failed (FinishTermination): the
	// kubelet's other moves leave it alone, so that its outcome does not depend on
	// who looks first. A released pod is no longer the owner's: left alone too.
	podCmd := func(f func(ns, name string) error) {
		if ps := w.pod(a.Pod); ps != nil && !ps.gone && !ps.released && (ps.last.DeletionTimestamp == nil || a.Do == VerbFinishTermination) {
			_ = f(w.ns, ps.name)
		}
	}
	switch a.Do {
	case VerbSync:
		w.sync(&a)
		return
	case VerbRun:
		podCmd(k.Run)
	case VerbReady:
		podCmd(func(ns, name string) error { return k.SetReady(ns, name, true) })
	case VerbSucceed:
		podCmd(k.Succeed)
	case VerbFail:
		podCmd(func(ns, name string) error { return k.Fail(ns, name, int32(max(a.N, 1))) })
	case VerbEvict:
		podCmd(k.Evict)
	case VerbRestartContainer:
		podCmd(k.RestartContainer)
	case VerbFinishTermination:
		podCmd(k.FinishTermination)
	case VerbDelete:
		podCmd(func(ns, name string) error { return c.RemovePod(ns, name, nil) })
	case VerbDeliverDue:
		cache.DeliverDue()
	case VerbDeliverAll:
		cache.DeliverAll()
	case VerbDeliverOne:
		if i := w.pendingIndex(a.Pod, false); i >= 0 {
			if i > 0 {
				w.disturb(FaultReorder)
			}
			_ = cache.DeliverAt(i)
		}
	case VerbDropDelete:
		if i := w.pendingIndex(a.Pod, true); i >= 0 {
			w.disturb(FaultLostDelete)
			_ = cache.DropAt(i)
		}
	case VerbLatency:
		if a.N > 0 {
			w.disturb(FaultDelay)
		}
		c.SetEventLatency(time.Duration(a.N) * time.Millisecond)
	case VerbRestart:
		w.disturb(FaultRestart)
		w.restart()
	case VerbSetParallelism, VerbSetElastic, VerbSuspend, VerbResume:
		err := w.updateSpec(func(s *batchv1.JobSpec) {
			switch a.Do {
			case VerbSetParallelism:
				s.Parallelism = ptr.To(int32(a.N))
			case VerbSetElastic:
				s.Parallelism, s.Completions = ptr.To(int32(a.N)), ptr.To(int32(a.N))
			case VerbSuspend:
				s.Suspend = ptr.To(true)
			case VerbResume:
				s.Suspend = ptr.To(false)
			}
		})
		if err == nil {
			w.clean = 0
		}
	case VerbAdvance:
		w.clock.Step(time.Duration(a.N) * time.Millisecond)
		w.tr.Actions = append(w.tr.Actions, a)
		w.checkStep()
		return
	case VerbDeleteOwner:
		w.deleteOwner()
	case VerbCollectGarbage:
		c.CollectGarbage()
	case VerbCleanOrphans:
		// Errors leave a finalizer for a later pass; the end of the run checks
		// that none is left.
		_, _ = reconciletest.NewDriver(c, w.r).CleanOrphans(context.Background())
	case VerbOrphan:
		w.addOrphan(a)
	case VerbRelabel, VerbReleaseActive:
		if ps := w.pod(a.Pod); ps != nil && !ps.gone && !ps.released && ps.last.DeletionTimestamp == nil &&
			(a.Do == VerbRelabel || isActive(ps.last)) {
			if _, err := c.PatchPodAs(w.ns, ps.name, relabelPatch); err == nil {
				w.clean = 0
			}
		}
	default:
		w.violate(InvNotFinished, "unknown action %q", a.Do)
	}
	w.tr.Actions = append(w.tr.Actions, a)
}

// restart replaces the controller: new Reconciler, new stores, and a new cache that
// lists everything before the first sync, as an informer does.
func (w *world) restart() {
	r, err := w.newReconciler()
	if err != nil {
		w.violate(InvNotFinished, "new reconciler: %v", err)
		return
	}
	w.r = r
	w.cluster.Cache().Reset()
	w.cluster.Cache().DeliverAll()
	w.clean = 0
}

// sync runs one sync of the Job from the cache.
func (w *world) sync(a *Action) {
	cache := w.cluster.Cache()
	caughtUp := len(cache.Pending()) == 0
	w.cur, w.calls, w.creates, w.faulted = a, 0, 0, false
	w.crashAfter = -1
	if a.Crash != nil {
		w.crashAfter = *a.Crash
		w.disturb(FaultCrash)
	}
	view := map[types.UID]string{}
	for _, p := range cache.Pods(w.ns) {
		view[p.UID] = p.ResourceVersion
	}
	w.model.view = view
	w.inSync = true
	job, wl := w.cachedOwner()
	w.syncOwner = ""
	if wl != nil {
		w.syncOwner = wl.UID
	}
	var res reconcile.Result
	var err error
	if wl != nil {
		res, err = w.r.Sync(context.Background(), wl, cache.PodsFor)
	}
	w.inSync = false
	w.model.view = nil
	if w.debug != nil {
		w.debugSync(job, res, err)
	}
	w.syncs++
	w.tr.Actions = append(w.tr.Actions, *a)
	if a.Crash != nil {
		w.restart()
	}
	if job != nil && caughtUp && !w.faulted && res.Plan != nil && res.Skipped == "" && w.clean < cleanSyncs {
		w.clean++
	}
	w.checkCalls()
	w.checkStep()
}

func (w *world) debugSync(job *batchv1.Job, res reconcile.Result, err error) {
	s := fmt.Sprintf("%d %s (sync %d)", w.acting, w.cur, w.syncs+1)
	if job != nil {
		s += fmt.Sprintf(" cached job rv=%s suspend=%v %s", job.ResourceVersion, deref(ptrBoolText(job.Spec.Suspend)), statusText(&job.Status))
	}
	if res.Plan != nil {
		s += "\n  plan: " + strings.ReplaceAll(res.Plan.String(), "\n", "\n  plan: ")
	}
	if res.Skipped != "" && res.Plan == nil {
		s += "\n  skipped: " + res.Skipped
	}
	if err != nil {
		s += fmt.Sprintf("\n  err: %v", err)
	}
	for _, call := range w.cluster.Calls() {
		s += "\n  call " + call.String()
	}
	w.debug(s)
}

func ptrBoolText(b *bool) *string {
	if b == nil {
		return nil
	}
	s := fmt.Sprint(*b)
	return &s
}
