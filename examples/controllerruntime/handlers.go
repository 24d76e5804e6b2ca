package controllerruntime

import (
	"context"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// Queue is the controller's workqueue as event handlers see it.
type Queue = workqueue.TypedRateLimitingInterface[crreconcile.Request]

// PodEventHandler adapts a function of reconcile.PodEvent to controller-runtime's
// event handler of pods: adds, updates (old and new) and deletes, the delete with
// the last state known (controller-runtime unwraps the tombstone of a missed
// deletion). Generic events and objects that are not pods are ignored. The Job
// controller and the TrainingJob controller (examples/trainingjob) feed
// Reconciler.ObservePodEvent(Of) with it.
type PodEventHandler func(ctx context.Context, ev reconcile.PodEvent, q Queue)

var _ handler.TypedEventHandler[client.Object, crreconcile.Request] = PodEventHandler(nil)

// Create passes a PodAdded event.
func (f PodEventHandler) Create(ctx context.Context, e event.TypedCreateEvent[client.Object], q Queue) {
	if pod, ok := e.Object.(*corev1.Pod); ok {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodAdded, New: pod}, q)
	}
}

// Update passes a PodUpdated event.
func (f PodEventHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q Queue) {
	old, ok1 := e.ObjectOld.(*corev1.Pod)
	cur, ok2 := e.ObjectNew.(*corev1.Pod)
	if ok1 && ok2 {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: cur}, q)
	}
}

// Delete passes a PodDeleted event with the last state known.
func (f PodEventHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q Queue) {
	if pod, ok := e.Object.(*corev1.Pod); ok {
		f(ctx, reconcile.PodEvent{Type: reconcile.PodDeleted, Old: pod}, q)
	}
}

// Generic does nothing.
func (f PodEventHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], Queue) {}

// handlePod feeds a pod event to Reconciler.ObservePodEvent, so that the event
// fulfils the expectations it concerns before the Jobs it names are queued (after
// the batch period), queues the Jobs that may adopt an orphan, and hands pods whose
// finalizer nobody will remove to the orphan worker. Setup watches pods with it
// instead of Owns(&corev1.Pod{}), whose handler queues the owner at once on a
// listener of its own, in no order with the expectation observations.
func (c *Controller) handlePod(ctx context.Context, ev reconcile.PodEvent, q Queue) {
	res := c.rec.ObservePodEvent(ev, func(namespace, name string) *finalizers.OrphanOwner {
		return finalizers.JobOwner(c.cachedJob(ctx, namespace, name))
	})
	for _, key := range res.Sync {
		ns, name := splitKey(key)
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}, res.Delay)
	}
	pod := ev.New
	if pod == nil {
		pod = ev.Old
	}
	if res.Adoptable {
		var jobs batchv1.JobList
		if err := c.cache.List(ctx, &jobs, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			c.log.Error(err, "Listing Jobs that may adopt a pod", "pod", pod.Namespace+"/"+pod.Name)
		}
		candidates := make([]*batchv1.Job, 0, len(jobs.Items))
		for i := range jobs.Items {
			if IsManagedBy(&jobs.Items[i], c.name) {
				candidates = append(candidates, &jobs.Items[i])
			}
		}
		for _, job := range reconcile.MatchingJobs(pod, candidates) {
			q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: job.Namespace, Name: job.Name}}, res.Delay)
		}
	}
	if res.OrphanCleanup {
		c.orphans.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	}
}

// cachedJob returns the Job namespace/name from the cache, or nil.
func (c *Controller) cachedJob(ctx context.Context, namespace, name string) *batchv1.Job {
	job := &batchv1.Job{}
	if err := c.cache.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, job, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return job
}

func splitKey(key string) (namespace, name string) {
	namespace, name, _ = strings.Cut(key, "/")
	return namespace, name
}

// jobHandler queues the Job syncs reconcile.MapJobEvent delays (status-only
// updates, after the batch period; For queues the others at once) and hands the pods
// of a Job that was deleted, replaced under its name or has just finished to the
// orphan worker. It changes no Reconciler state: the Job's state is forgotten by the
// worker that finds it gone (Reconcile), the only goroutine syncing that key, so
// that a late delete event cannot drop the expectations of a Job recreated under the
// same name.
type jobHandler struct{ c *Controller }

var _ handler.TypedEventHandler[client.Object, crreconcile.Request] = (*jobHandler)(nil)

func (h *jobHandler) Create(context.Context, event.TypedCreateEvent[client.Object], Queue) {}

func (h *jobHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q Queue) {
	old, ok1 := e.ObjectOld.(*batchv1.Job)
	cur, ok2 := e.ObjectNew.(*batchv1.Job)
	if !ok1 || !ok2 {
		return
	}
	m := reconcile.MapJobEvent(reconcile.JobEvent{Type: reconcile.JobUpdated, Old: old, New: cur}, h.c.batch)
	if m.Sync && m.Delay > 0 {
		q.AddAfter(crreconcile.Request{NamespacedName: types.NamespacedName{Namespace: cur.Namespace, Name: cur.Name}}, m.Delay)
	}
	if m.OrphanCleanup {
		h.c.queueOrphans(ctx, old)
	}
}

func (h *jobHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], _ Queue) {
	if job, ok := e.Object.(*batchv1.Job); ok {
		h.c.queueOrphans(ctx, job)
	}
}

func (h *jobHandler) Generic(context.Context, event.TypedGenericEvent[client.Object], Queue) {}

// queueOrphans queues the cached pods controlled by job that carry the tracking
// finalizer for the orphan worker.
func (c *Controller) queueOrphans(ctx context.Context, job *batchv1.Job) {
	var pods corev1.PodList
	if err := c.cache.List(ctx, &pods, client.InNamespace(job.Namespace),
		client.MatchingFields{OwnerUIDIndex: string(job.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		c.log.Error(err, "Listing the pods of a Job for the orphan cleanup", "job", reconcile.Key(job.Namespace, job.Name))
		return
	}
	for i := range pods.Items {
		if finalizers.Has(&pods.Items[i], finalizers.Name) {
			c.orphans.Add(types.NamespacedName{Namespace: job.Namespace, Name: pods.Items[i].Name})
		}
	}
}

// OrphanWorker removes the tracking finalizer of the pods queued in Queue, calling
// Clean for each on Workers goroutines (zero means 1) and retrying a failure with the
// queue's rate limiting. It is a manager.Runnable that runs only on the leader. Setup
// adds one for the Job controller's orphans (Clean decides with
// Reconciler.CleanOrphan); a controller of another owner kind adds its own
// (examples/trainingjob).
type OrphanWorker struct {
	// Queue holds the pods to look at; the worker shuts it down when it stops.
	Queue workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// Clean removes the finalizer of one pod if the owner's rules allow it; an
	// error requeues the pod with rate limiting.
	Clean func(ctx context.Context, pod types.NamespacedName) error
	// Log receives the failures.
	Log logr.Logger
	// Workers is how many pods are cleaned at once; zero means 1.
	Workers int
}

// NeedLeaderElection is true: only the leader writes.
func (o *OrphanWorker) NeedLeaderElection() bool { return true }

// Start runs the workers until ctx ends, then shuts the queue down. The manager
// starts it once its caches have synced.
func (o *OrphanWorker) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		o.Queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for range max(o.Workers, 1) {
		wg.Go(func() {
			for o.next(ctx) {
			}
		})
	}
	wg.Wait()
	return nil
}

func (o *OrphanWorker) next(ctx context.Context) bool {
	key, shutdown := o.Queue.Get()
	if shutdown {
		return false
	}
	defer o.Queue.Done(key)
	if err := o.Clean(ctx, key); err != nil {
		if ctx.Err() == nil {
			o.Log.Error(err, "Orphan pod cleanup failed; retrying", "pod", key.String())
			o.Queue.AddRateLimited(key)
		}
		return true
	}
	o.Queue.Forget(key)
	return true
}

// cleanOrphan removes the tracking finalizer of the cached pod key when
// Reconciler.CleanOrphan decides so. A Job missing from the cache is looked up on the
// API server before its pod counts as orphaned: the pod and Job informers are
// separate watches, so a pod created by another controller can reach the cache
// before its Job does.
func (c *Controller) cleanOrphan(ctx context.Context, key types.NamespacedName) error {
	pod := &corev1.Pod{}
	if err := c.cache.Get(ctx, key, pod, client.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	var job *batchv1.Job
	if ref := owner.BatchJob.ControllerOf(pod); ref != nil {
		jobKey := types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}
		j := &batchv1.Job{}
		err := c.cache.Get(ctx, jobKey, j, client.UnsafeDisableDeepCopy)
		if apierrors.IsNotFound(err) || (err == nil && j.UID != ref.UID) {
			j = &batchv1.Job{}
			err = c.api.Get(ctx, jobKey, j)
		}
		switch {
		case err == nil:
			job = j
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	_, err := c.rec.CleanOrphan(ctx, pod, finalizers.JobOwner(job))
	return err
}
