package sim

import (
	"context"
	"fmt"
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

// world runs the actions of a trace against an in-memory cluster.
type world struct {
	tr    *Trace // actions run so far are appended to it
	ns    string
	name  string
	kind  owner.Kind // the owner's kind: owner.BatchJob, or the Tasks' (Trace.Owner)
	tasks bool       // the owner is a reconciletest.Task
	// taskStore holds the Tasks when tasks is set.
	taskStore *reconciletest.Store[*reconciletest.Task]
	// ctlKind is the owner kind the controller is configured with: kind, except in
	// tests of a broken controller.
	ctlKind owner.Kind
	// readBackFails makes the controller's reads of a pod fail, in tests of a
	// broken controller: a refused name is then given up only after
	// UncertainCreationTimeout, the stall of issue 20.
	readBackFails bool
	// relabelOrphans makes VerbRelabel also drop the pod's controller reference, in
	// tests of a broken controller: the pod is released by someone else, so the
	// controller never releases it and learns that its name is taken only from a
	// refused creation (the read-back).
	relabelOrphans bool
	// refused counts, by index, the syncs whose creation for the index was refused
	// with AlreadyExists since the index last held a live pod of the owner.
	refused map[int]int
	clock   *clocktesting.FakeClock
	cluster *reconciletest.Cluster
	// driver holds the controller (Driver.Reconciler): it syncs the owner, hears
	// the cache's events and runs the orphan cleanup.
	driver *reconciletest.Driver
	model  *model

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
	opts := reconciletest.Options{Seed: tr.Seed}
	var cluster *reconciletest.Cluster
	var taskStore *reconciletest.Store[*reconciletest.Task]
	if tasks {
		opts.Owner = kind
		cluster, taskStore = reconciletest.NewStore(opts, reconciletest.TaskType)
	} else {
		cluster = reconciletest.NewCluster(opts)
	}
	clk := cluster.Clock()
	w := &world{
		tr:         &Trace{Seed: tr.Seed, Note: tr.Note, Job: tr.Job, Owner: tr.Owner, Controller: tr.Controller},
		ns:         tr.Job.Namespace,
		name:       tr.Job.Name,
		kind:       kind,
		tasks:      tasks,
		taskStore:  taskStore,
		ctlKind:    kind,
		clock:      clk,
		cluster:    cluster,
		faults:     Counts{},
		refused:    map[int]int{},
		crashAfter: -1,
		clean:      cleanSyncs,
	}
	w.model = newModel(w)
	w.cluster.OnWrite(w.model.observe)
	w.cluster.SetInterceptor(w.intercept)
	cache := w.cluster.Cache()
	r, err := w.newReconciler()
	if err != nil {
		return nil, err
	}
	// The Driver feeds the cache's events to the controller, as in users' tests:
	// pod events with the cached owners' facts, Job events, and the deletion of a
	// Task; it runs each sync (Driver.Sync) and the orphan cleanup. The world
	// decides the outcome of each call through the Cluster's one interceptor
	// (intercept) and checks the model around each sync.
	w.driver = reconciletest.NewDriver(w.cluster, r)
	job := tr.Job.DeepCopy()
	job.Spec.ManagedBy = ptr.To(ControllerName)
	if tasks {
		_, err = w.taskStore.Create(&reconciletest.Task{ObjectMeta: job.ObjectMeta, Spec: job.Spec})
	} else {
		_, err = w.cluster.Jobs().Create(job)
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
		cfg.ReadOwner = w.cluster.Jobs().ReadOwner
		return reconcile.New(cfg, w.podClient(), reconcile.JobStatusWriter(w.cluster))
	}
	cfg.Owner = w.ctlKind
	cfg.ReadOwner = w.taskStore.ReadOwner
	return reconcile.New(cfg, w.podClient(), w.cluster)
}

// cachedOwner returns the owner as the controller's cache shows it, presented as a
// Job (a Task's spec and status are a Job's), and its Workload; nil when the cache
// does not have it.
func (w *world) cachedOwner() (*batchv1.Job, *plan.Workload) {
	if w.tasks {
		t := w.taskStore.Cached(w.ns, w.name)
		if t == nil {
			return nil, nil
		}
		return jobView(t), t.Workload()
	}
	j := w.cluster.Jobs().Cached(w.ns, w.name)
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
		_, err := w.taskStore.Update(w.ns, w.name, func(t *reconciletest.Task) { f(&t.Spec) })
		return err
	}
	_, err := w.cluster.Jobs().Update(w.ns, w.name, func(j *batchv1.Job) { f(&j.Spec) })
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
		_, _ = w.driver.CleanOrphans(context.Background())
	case VerbOrphan:
		w.addOrphan(a)
	case VerbRelabel, VerbReleaseActive:
		if ps := w.pod(a.Pod); ps != nil && !ps.gone && !ps.released && ps.last.DeletionTimestamp == nil &&
			(a.Do == VerbRelabel || isActive(ps.last)) {
			patch := relabelPatch
			if w.relabelOrphans {
				patch = relabelOrphanPatch
			}
			if _, err := c.PatchPodAs(w.ns, ps.name, patch); err == nil {
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
	w.use(r)
	w.cluster.Cache().Reset()
	w.cluster.Cache().DeliverAll()
	w.clean = 0
}

// use makes r the controller.
func (w *world) use(r *reconcile.Reconciler) { w.driver.Reconciler = r }

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
	if a.DuringList != 0 && !caughtUp {
		w.disturb(FaultDuringList)
		cache.DeliverDuringList(a.DuringList)
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
	// The Driver syncs the owner as cached, as in users' tests; the world's
	// interceptor (intercept) decides the outcome of each of its calls.
	_, res, err := w.driver.Sync(context.Background(), w.ns, w.name)
	cache.DeliverDuringList(0) // a sync that listed nothing leaves no arm behind
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
