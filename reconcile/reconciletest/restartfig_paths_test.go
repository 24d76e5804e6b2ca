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
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// restartJobWorkers is the workers of the Job controller of the child Jobs,
// the kube-controller-manager's default.
const restartJobWorkers = 5

// restartFailure is the failure policy of both paths: one restart.
func restartFailure() *plaingroup.FailurePolicy { return &plaingroup.FailurePolicy{MaxRestarts: 1} }

// runRestartRoles runs the restart figure as one owner of units roles of 8
// pods each (Indexed, backoffLimit 0: a failed pod fails its role), synced by
// Reconciler.SyncRoles with one worker.
func runRestartRoles(ctx context.Context, units int, L, lag time.Duration) (restartResult, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c, owners := NewStore(Options{Clock: clk, EventLatency: lag, Owner: figKind}, RunType)
	f := newFigRun(c, L, figKind)
	f.m.hold = func(*corev1.Pod) bool { return true }
	w := newRestartWatch(f, units*restartPods, lag)
	r, err := reconcile.New(reconcile.Config{Name: figController, Owner: figKind, Clock: clk, PodEventBatchPeriod: L / 5}, c, c)
	if err != nil {
		return restartResult{}, err
	}
	tmpl := figPodTemplate()
	roles := make([]ownedpods.Role, units)
	for i := range roles {
		roles[i] = ownedpods.Role{Name: fmt.Sprintf("w%04d", i), Spec: plan.Spec{Template: &tmpl,
			Completions: ptr.To[int32](restartPods), Parallelism: ptr.To[int32](restartPods),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](0)}}
	}
	if _, err := owners.Create(runOf(&ownedpods.Workload{Namespace: figNamespace, Name: figName, ManagedBy: ptr.To(figController),
		Roles: roles, FailurePolicy: restartFailure()})); err != nil {
		return restartResult{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	q := newLatencyQueue()
	lookup := memoFacts(owners)
	c.Cache().OnPodEvent(func(ev reconcile.PodEvent) {
		res := r.ObservePodEvent(ev, lookup)
		for _, k := range res.Sync {
			q.add(k, res.Delay)
		}
	})
	// The owner's events too: the status write that advances the roles to the
	// new attempt is what queues the sync that creates its pods.
	owners.OnEvent(func(ev reconcile.OwnerEvent) {
		if m := r.ObserveOwnerEvent(ev); m.Sync {
			q.add(m.Key, m.Delay)
		}
	})
	startInformer(ctx, c, &f.wg)
	f.done, f.cancel = w.restarted, cancel
	status := owners.RolesWriter()
	f.worker(ctx, q, func(ctx context.Context, _ string) (time.Duration, error) {
		run, err := owners.Get(figNamespace, figName)
		if err != nil {
			return 0, err
		}
		g, err := RunType.Roles(run)
		if err != nil {
			return 0, err
		}
		res, err := r.SyncRoles(ctx, g, owners.rolesPods, status)
		return res.RequeueAfter, err
	})
	q.add(reconcile.Key(figNamespace, figName), 0) // the owner's Added event
	victim := fmt.Sprintf("w%04d", units/2)
	var at callCounts
	failErr := w.failOnce(ctx, func(p *corev1.Pod) bool {
		return p.Labels[plaingroup.LabelRoleName] == victim && p.Annotations[figKind.IndexKey()] == "0"
	}, func() { at = f.m.snapshot() })
	res, err := restartFinish(f, w, "one owner of roles (SyncRoles)", units, lag, failErr)
	res.owner = f.m.snapshot().minus(at)
	return res, err
}

// memoFacts is owners.liveFacts (the owner as stored) computed once per
// resourceVersion: the conversion of an owner of 1,000 roles copies their
// statuses, and the figure looks the owner up at every pod event.
func memoFacts(owners *Store[*Run]) func(namespace, name string) *finalizers.OrphanOwner {
	var mu sync.Mutex
	var rv string
	var facts *finalizers.OrphanOwner
	return func(namespace, name string) *finalizers.OrphanOwner {
		owners.c.mu.Lock()
		cur, ok := owners.objs[key(namespace, name)]
		owners.c.mu.Unlock()
		if !ok {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if cur.GetResourceVersion() != rv {
			rv, facts = cur.GetResourceVersion(), owners.liveFacts(namespace, name)
		}
		return facts
	}
}

// failOnce runs fail on the run's goroutines, counted in f.wg, and returns a
// function that returns its error once the run is over.
func (w *restartWatch) failOnce(ctx context.Context, victim func(*corev1.Pod) bool, snap func()) func() error {
	var err error
	f := w.f
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err = w.fail(ctx, victim, snap); err != nil {
			f.cancel()
		}
	}()
	return func() error { return err }
}

// restartFinish waits for the run and fills what both paths share.
func restartFinish(f *figRun, w *restartWatch, path string, units int, lag time.Duration, failErr func() error) (restartResult, error) {
	f.wg.Wait()
	res := restartResult{path: path, units: units, lag: lag}
	if err := errors.Join(f.m.failed(), failErr()); err != nil {
		return res, err
	}
	for _, call := range f.c.Calls() {
		if apierrors.IsConflict(call.Err) {
			res.conflicts++
		}
	}
	f.mu.Lock()
	res.syncErrors = f.syncErrors
	f.mu.Unlock()
	w.mu.Lock()
	res.created = w.created
	w.mu.Unlock()
	var err error
	res.startInL, res.restartInL, err = w.times()
	return res, err
}

func (c callCounts) minus(o callCounts) callCounts {
	return callCounts{c.creates - o.creates, c.patches - o.patches, c.deletes - o.deletes, c.status - o.status}
}

// restartGroup is the group of the child Jobs path, synced by
// Reconciler.SyncChildJobs: its status held in memory (each write one call of
// L), its calls on child Jobs made through the Cluster's Jobs, each taking L,
// a foreground deletion finished by the garbage collector.
type restartGroup struct {
	f     *figRun
	w     *restartWatch
	ctx   context.Context // the run's: a collection waiting for pods ends with it
	lag   time.Duration
	units int
	obj   *metav1.PartialObjectMetadata

	mu     sync.Mutex
	status childjobs.Status
	rv     int
	// deleting counts the child Jobs being deleted (foreground).
	deleting int
	writes   callCounts // creates, deletes and suspend patches of child Jobs, status
	gc       callCounts // pod deletes; patches: a child Job's foreground finalizer
}

// input is the childjobs.Input of one sync: the group as held, the cached Jobs.
func (g *restartGroup) input() *childjobs.Input {
	tmpl := batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To[int32](restartPods), Parallelism: ptr.To[int32](restartPods),
		CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](0), Template: figPodTemplate()}}
	g.mu.Lock()
	st, rv := g.status, g.rv
	g.mu.Unlock()
	return &childjobs.Input{
		Name: figName, Namespace: figNamespace, UID: g.obj.UID, Generation: 1, Owner: figJobSet,
		ResourceVersion: fmt.Sprint(rv), Object: g.obj,
		Spec: plaingroup.Spec{
			Roles:         []plaingroup.Role{{Name: "worker", Replicas: int32(g.units)}},
			FailurePolicy: restartFailure(),
		},
		Templates:          []batchv1.JobTemplateSpec{tmpl},
		EnableDNSHostnames: ptr.To(false),
		Status:             st,
		Children:           g.f.c.Jobs().CachedList(),
		ChildManagedBy:     figController,
	}
}

func (g *restartGroup) add(n *int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*n++
}

// WriteStatus is the group's status subresource: one call of L, refused with a
// Conflict when in is not the group as last written.
func (g *restartGroup) WriteStatus(_ context.Context, in *childjobs.Input, st childjobs.Status) (*childjobs.Input, error) {
	g.add(&g.writes.status)
	var out *childjobs.Input
	err := g.f.call(func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		if in.ResourceVersion != fmt.Sprint(g.rv) {
			return apierrors.NewConflict(jobsResource, in.Name, errors.New("the group changed"))
		}
		g.rv++
		g.status = st
		cp := *in
		cp.Status, cp.ResourceVersion = st, fmt.Sprint(g.rv)
		out = &cp
		return nil
	})
	return out, err
}

func (g *restartGroup) CreateJob(_ context.Context, job *batchv1.Job) error {
	g.add(&g.writes.creates)
	return g.f.call(func() error { _, err := g.f.c.Jobs().Create(job); return err })
}

func (g *restartGroup) DeleteJob(_ context.Context, job *batchv1.Job, propagation metav1.DeletionPropagation) error {
	g.add(&g.writes.deletes)
	c := g.f.c
	err := g.f.call(func() error {
		cur, err := c.Jobs().Get(job.Namespace, job.Name)
		switch {
		case err != nil:
			return err
		case cur.UID != job.UID:
			return apierrors.NewConflict(jobsResource, job.Name, errors.New("another UID"))
		case propagation != metav1.DeletePropagationForeground:
			return fmt.Errorf("restart figure: a %s deletion of %s, want Foreground", propagation, job.Name)
		}
		_, err = c.Jobs().Update(job.Namespace, job.Name, func(j *batchv1.Job) {
			if j.DeletionTimestamp == nil {
				j.DeletionTimestamp = ptr.To(metav1.NewTime(c.Clock().Now()))
				j.Finalizers = append(j.Finalizers, metav1.FinalizerDeleteDependents)
			}
		})
		return err
	})
	if err == nil {
		g.mu.Lock()
		g.deleting++
		g.mu.Unlock()
		g.collect(job)
	}
	return err
}

func (g *restartGroup) SuspendJob(_ context.Context, job *batchv1.Job, suspend bool) error {
	g.add(&g.writes.patches)
	return g.f.call(func() error {
		_, err := g.f.c.Jobs().Update(job.Namespace, job.Name, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(suspend) })
		return err
	})
}

func (g *restartGroup) CreateService(context.Context, *corev1.Service) error {
	return errors.New("restart figure: DNS hostnames are off, no Service")
}

func (g *restartGroup) DeleteGroup(context.Context, *childjobs.Input) error {
	return errors.New("restart figure: the group has no TTL")
}

// collect is the garbage collector of the foreground deletion of job: once the
// deletion's event reaches it, it deletes the Job's pods (a call each,
// concurrently), waits until none is left (their finalizers removed by the Job
// controller, the kubelet's confirmation), and removes the Job's
// foreground-deletion finalizer (a call), which deletes it.
func (g *restartGroup) collect(job *batchv1.Job) {
	f := g.f
	f.begin()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer f.end()
		time.Sleep(g.lag)
		f.tick()
		var wg sync.WaitGroup
		for _, name := range g.w.ownedBy(job.UID) {
			if p := f.c.Cache().Pod(job.Namespace, name); p != nil && p.DeletionTimestamp != nil {
				continue // the garbage collector's informer shows it being deleted
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.add(&g.gc.deletes)
				_ = f.call(func() error { return f.c.RemovePod(job.Namespace, name, nil) })
			}()
		}
		wg.Wait()
		empty := g.w.emptiedCh(job.UID)
		f.end() // idle while it waits
		select {
		case <-g.ctx.Done():
			f.begin()
			return
		case <-empty:
		}
		f.begin()
		time.Sleep(g.lag)
		g.add(&g.gc.patches)
		_ = f.call(func() error { return f.c.Jobs().Delete(job.Namespace, job.Name) })
		g.mu.Lock()
		g.deleting--
		g.mu.Unlock()
	}()
}

// runRestartChildJobs runs the restart figure as a group of units child Jobs
// of 8 pods (Indexed, backoffLimit 0: a failed pod fails its Job), the group
// synced by Reconciler.SyncChildJobs (one worker), the children by jobkit's Job
// Reconciler (restartJobWorkers workers).
func runRestartChildJobs(ctx context.Context, units int, L, lag time.Duration) (restartResult, error) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := NewCluster(Options{Clock: clk, EventLatency: lag})
	f := newFigRun(c, L, owner.BatchJob)
	f.m.hold = func(*corev1.Pod) bool { return true }
	w := newRestartWatch(f, units*restartPods, lag)
	jr, err := reconcile.New(reconcile.Config{Name: figController, Clock: clk, PodEventBatchPeriod: L / 5}, c, reconcile.JobStatusWriter(c))
	if err != nil {
		return restartResult{}, err
	}
	gr, err := reconcile.New(reconcile.Config{Name: plaingroup.ControllerName, Owner: figKind, Clock: clk}, nil, nil)
	if err != nil {
		return restartResult{}, err
	}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: figNamespace, Name: figName, UID: types.UID("jobset-" + figName)}}
	obj.SetGroupVersionKind(figJobSet)
	g := &restartGroup{f: f, w: w, lag: lag, units: units, obj: obj}

	ctx, cancel := context.WithTimeout(ctx, figLimit*L)
	defer cancel()
	g.ctx = ctx
	jobs, groups := newLatencyQueue(), newLatencyQueue()
	groupKey := reconcile.Key(figNamespace, figName)
	cache := c.Cache()
	cache.OnPodEvent(func(ev reconcile.PodEvent) {
		res := jr.ObservePodEvent(ev, c.Jobs().CachedOwner)
		for _, k := range res.Sync {
			jobs.add(k, res.Delay)
		}
	})
	c.Jobs().OnEvent(func(ev reconcile.OwnerEvent) {
		if m := jr.ObserveOwnerEvent(ev); m.Sync {
			jobs.add(m.Key, m.Delay)
		}
		groups.add(groupKey, 0) // the group controller watches the Jobs it owns
	})
	startInformer(ctx, c, &f.wg)
	f.done = func() bool {
		g.mu.Lock()
		deleting := g.deleting
		g.mu.Unlock()
		return deleting == 0 && w.restarted()
	}
	f.cancel = cancel
	f.worker(ctx, groups, func(ctx context.Context, _ string) (time.Duration, error) {
		res, err := gr.SyncChildJobs(ctx, g.input(), g, g)
		return res.RequeueAfter, err
	})
	for range restartJobWorkers {
		f.worker(ctx, jobs, func(ctx context.Context, k string) (time.Duration, error) {
			ns, name, _ := strings.Cut(k, "/")
			job := c.Jobs().Cached(ns, name)
			if job == nil {
				return 0, nil
			}
			out, err := jr.Sync(ctx, plan.JobWorkload(job), cache.OwnerPods)
			return out.RequeueAfter, err
		})
	}
	groups.add(groupKey, 0) // the group's Added event
	victim := fmt.Sprint(units / 2)
	var atJobs, atGroup, atGC callCounts
	failErr := w.failOnce(ctx, func(p *corev1.Pod) bool {
		return p.Labels[plaingroup.LabelJobIndex] == victim && p.Annotations[batchv1.JobCompletionIndexAnnotation] == "0"
	}, func() {
		atJobs = f.m.snapshot()
		g.mu.Lock()
		atGroup, atGC = g.writes, g.gc
		g.mu.Unlock()
	})
	res, err := restartFinish(f, w, "child Jobs (SyncChildJobs, Job Sync)", units, lag, failErr)
	res.jobs = f.m.snapshot().minus(atJobs)
	g.mu.Lock()
	res.owner, res.gc = g.writes.minus(atGroup), g.gc.minus(atGC)
	g.mu.Unlock()
	return res, err
}
