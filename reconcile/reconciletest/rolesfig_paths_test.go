package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// figKind is the owner of several roles of the figures.
var figKind = owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob",
	Finalizer: "ml.example.com/tracking", KeyPrefix: "ml.example.com/trainingjob-"}

// figJobSet is the group owner of the JobSet-compatible path.
var figJobSet = schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}

// figPodTemplate is the pod template of both roles on both paths.
func figPodTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "trainer"}},
	}}
}

// figSuccess is the success policy of both paths: the launcher succeeded.
func figSuccess() *plaingroup.SuccessPolicy {
	return &plaingroup.SuccessPolicy{Operator: plaingroup.All, TargetReplicatedJobs: []string{"launcher"}}
}

// figDependsOn is the launcher's dependency: the workers are Ready.
func figDependsOn() []plaingroup.Dependency {
	return []plaingroup.Dependency{{Name: "worker", Status: plaingroup.DependsOnReady}}
}

// figRolesStatus records the return of the status write that made the owner
// Complete.
type figRolesStatus struct {
	s *Store[*Run]
	f *figRun
}

func (w figRolesStatus) WriteStatus(ctx context.Context, wl *ownedpods.Workload, st ownedpods.Status) (*ownedpods.Workload, error) {
	out, err := rolesWriter[*Run]{w.s}.WriteStatus(ctx, wl, st)
	if err == nil && out.Status.TerminalState == plaingroup.ConditionCompleted {
		w.f.completed()
	}
	return out, err
}

// runRolesFigure runs the scenario as one owner of two roles synced by
// Reconciler.SyncRoles.
func runRolesFigure(ctx context.Context, L, lag time.Duration) (figResult, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c, owners := NewStore(Options{Clock: clk, EventLatency: lag, Owner: figKind}, RunType)
	f := newFigRun(c, L, figKind)
	r, err := reconcile.New(reconcile.Config{Name: figController, Owner: figKind, Clock: clk, PodEventBatchPeriod: L / 5}, c, c)
	if err != nil {
		return figResult{}, err
	}
	tmpl := figPodTemplate()
	worker := ownedpods.Role{Name: "worker", Spec: plan.Spec{Template: &tmpl, Completions: ptr.To[int32](figWorkers),
		Parallelism: ptr.To[int32](figWorkers), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	launcher := ownedpods.Role{Name: "launcher", Spec: plan.Spec{Template: &tmpl, Completions: ptr.To[int32](1),
		Parallelism: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion)}, DependsOn: figDependsOn()}
	if _, err := owners.Create(runOf(&ownedpods.Workload{Namespace: figNamespace, Name: figName, ManagedBy: ptr.To(figController),
		Roles: []ownedpods.Role{worker, launcher}, SuccessPolicy: figSuccess()})); err != nil {
		return figResult{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	q := newLatencyQueue()
	lookup := owners.liveFacts // the owner as stored: the figure's controller reads no owner cache
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, lookup)
		for _, k := range res.Sync {
			q.add(k, res.Delay)
		}
	})
	startInformer(ctx, c, &f.wg)
	status, done := figRolesStatus{s: owners, f: f}, owners.DoneFunc()
	f.done = func() bool { d, _ := done(figNamespace, figName); return d }
	f.cancel = cancel
	f.worker(ctx, q, func(ctx context.Context, _ string) (time.Duration, error) {
		run, err := owners.Get(figNamespace, figName)
		if err != nil {
			return 0, err
		}
		w, err := RunType.Roles(run)
		if err != nil {
			return 0, err
		}
		res, err := r.SyncRoles(ctx, w, owners.rolesPods, status)
		return res.RequeueAfter, err
	})
	q.add(reconcile.Key(figNamespace, figName), 0) // the owner's Added event
	res, err := f.result("one owner of roles (SyncRoles)", lag)
	res.owner = f.m.snapshot()
	return res, err
}

// figGroup is the test-side controller of the JobSet-compatible path: it holds
// the group owner (its status in memory, each write one API call taking L; with
// one worker there is no concurrent write to refuse),
// computes childjobs.Plan from the cached child Jobs and executes it in the order
// examples/jobset/controller does (status, deletions, suspensions, creations).
// A deletion is foreground, as the plan asks: the Job gets its deletionTimestamp
// and the garbage collector deletes its pods, one call each.
type figGroup struct {
	f   *figRun
	lag time.Duration
	uid types.UID

	mu     sync.Mutex
	status childjobs.Status
	writes callCounts // creates and deletes of child Jobs, patches of spec.suspend, status
	gc     callCounts
	// tune, when set, changes the Input of each sync (another scenario's
	// spec, templates and pods).
	tune func(*childjobs.Input)
}

// input is the childjobs.Input of one sync: the stored group, the cached Jobs.
func (g *figGroup) input() *childjobs.Input {
	worker := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To[int32](figWorkers), Parallelism: ptr.To[int32](figWorkers),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: figPodTemplate()}}
	launcher := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: figPodTemplate()}}
	g.mu.Lock()
	st := g.status
	g.mu.Unlock()
	in := &childjobs.Input{
		Name: figName, Namespace: figNamespace, UID: g.uid, Generation: 1, Owner: figJobSet,
		Spec: plaingroup.Spec{
			Roles: []plaingroup.Role{
				{Name: "worker", Replicas: 1},
				{Name: "launcher", Replicas: 1, DependsOn: figDependsOn()},
			},
			SuccessPolicy: figSuccess(),
		},
		Templates:          []batchv1.JobTemplateSpec{worker, launcher},
		EnableDNSHostnames: ptr.To(false),
		Status:             st,
		Children:           g.f.c.Jobs().CachedList(),
		ChildManagedBy:     figController,
		Now:                g.f.c.Clock().Now(),
	}
	if g.tune != nil {
		g.tune(in)
	}
	return in
}

// add counts one call in n, a counter of g.writes or g.gc.
func (g *figGroup) add(n *int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*n++
}

// sync is one sync of the group.
func (g *figGroup) sync(ctx context.Context, _ string) (time.Duration, error) {
	p, err := childjobs.Compute(g.input())
	if err != nil || p.Skip != "" {
		return 0, err
	}
	if p.DeleteGroup != "" || p.Service != nil {
		return 0, fmt.Errorf("figures: the plan asks what the scenario does not model: %s", p.String())
	}
	c := g.f.c
	if p.StatusChanged {
		g.add(&g.writes.status)
		_ = g.f.call(func() error {
			g.mu.Lock()
			g.status = p.Status
			g.mu.Unlock()
			return nil
		})
		if p.Status.TerminalState == plaingroup.ConditionCompleted {
			g.f.completed()
		}
	}
	var errs []error
	for _, d := range p.Delete {
		g.add(&g.writes.deletes)
		err := g.f.call(func() error {
			_, err := c.Jobs().Update(d.Job.Namespace, d.Job.Name, func(j *batchv1.Job) {
				if j.UID == d.Job.UID && j.DeletionTimestamp == nil {
					j.DeletionTimestamp = ptr.To(metav1.NewTime(c.Clock().Now()))
					j.Finalizers = append(j.Finalizers, metav1.FinalizerDeleteDependents)
				}
			})
			return err
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.collect(d.Job)
	}
	for _, set := range []struct {
		jobs    []childjobs.JobAction
		suspend bool
	}{{p.Suspend, true}, {p.Resume, false}} {
		for _, a := range set.jobs {
			g.add(&g.writes.patches)
			errs = append(errs, g.f.call(func() error {
				_, err := c.Jobs().Update(a.Job.Namespace, a.Job.Name, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(set.suspend) })
				return err
			}))
		}
	}
	for _, a := range p.Create {
		g.add(&g.writes.creates)
		err := g.f.call(func() error { _, err := c.Jobs().Create(a.Job); return err })
		if err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, err)
		}
	}
	return p.RequeueAfter, errors.Join(errs...)
}

// collect is the garbage collector of a foreground deletion of job: once the
// deletion's event reaches it, it deletes each of the Job's pods, one call each,
// concurrently.
func (g *figGroup) collect(job *batchv1.Job) {
	f := g.f
	f.begin()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.end()
		time.Sleep(g.lag)
		var wg sync.WaitGroup
		for _, p := range f.c.ListPods(job.Namespace) {
			if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID != job.UID || p.DeletionTimestamp != nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.add(&g.gc.deletes)
				_ = f.call(func() error { return f.c.RemovePod(p.Namespace, p.Name, nil) })
			}()
		}
		wg.Wait()
	}()
}

// runJobSetFigure runs the scenario through the JobSet-compatible path: a group
// of two replicated Jobs (workers: one child of 64 pods; launcher: one child of
// one pod), each child Job run by jobkit's Job Reconciler.
func runJobSetFigure(ctx context.Context, L, lag time.Duration) (figResult, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := NewCluster(Options{Clock: clk, EventLatency: lag})
	f := newFigRun(c, L, owner.BatchJob)
	r, err := reconcile.New(reconcile.Config{Name: figController, Clock: clk, PodEventBatchPeriod: L / 5}, c, reconcile.JobStatusWriter(c))
	if err != nil {
		return figResult{}, err
	}
	g := &figGroup{f: f, lag: lag, uid: "jobset-" + figName}

	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	jobs, groups := newLatencyQueue(), newLatencyQueue()
	groupKey := reconcile.Key(figNamespace, figName)
	cache := c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, c.Jobs().CachedOwner)
		for _, k := range res.Sync {
			jobs.add(k, res.Delay)
		}
	})
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		if m := r.ObserveOwnerEvent(ev); m.Sync {
			jobs.add(m.Key, m.Delay)
		}
		groups.add(groupKey, 0) // the group controller watches the Jobs it owns
	})
	startInformer(ctx, c, &f.wg)
	f.cancel = cancel
	f.done = func() bool {
		g.mu.Lock()
		terminal := g.status.TerminalState
		g.mu.Unlock()
		if terminal != plaingroup.ConditionCompleted {
			return false
		}
		for _, p := range c.ListPods(figNamespace) {
			if owner.BatchJob.HasFinalizer(p) {
				return false
			}
		}
		return true
	}
	f.worker(ctx, groups, g.sync)
	f.worker(ctx, jobs, func(ctx context.Context, k string) (time.Duration, error) {
		ns, name, _ := strings.Cut(k, "/")
		job := c.Jobs().Cached(ns, name)
		if job == nil {
			return 0, nil
		}
		out, err := r.Sync(ctx, plan.JobWorkload(job), cache.OwnerPods)
		return out.RequeueAfter, err
	})
	groups.add(groupKey, 0) // the group's Added event
	res, err := f.result("child Jobs (childjobs.Compute, Job Sync)", lag)
	res.jobs = f.m.snapshot()
	g.mu.Lock()
	res.owner, res.gc = g.writes, g.gc
	g.mu.Unlock()
	return res, err
}

// runOf is w as a Run: its identity in the metadata, the roles and rules in the
// spec.
func runOf(w *ownedpods.Workload) *Run {
	return &Run{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name}, Spec: *w, Status: w.Status}
}
