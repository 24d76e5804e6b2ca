package controllerruntime

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/jobkit/jobkit/examples/internal/adoption"
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

// adopters returns the Jobs of this controller that may adopt the orphan pod.
func (c *Controller) adopters(ctx context.Context, pod *corev1.Pod) []types.NamespacedName {
	var jobs batchv1.JobList
	if err := c.cache.List(ctx, &jobs, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		c.log.Error(err, "Listing Jobs that may adopt a pod", "pod", pod.Namespace+"/"+pod.Name)
		return nil
	}
	candidates := make([]*batchv1.Job, 0, len(jobs.Items))
	for i := range jobs.Items {
		if IsManagedBy(&jobs.Items[i], c.name) {
			candidates = append(candidates, &jobs.Items[i])
		}
	}
	var out []types.NamespacedName
	for _, job := range adoption.MatchingJobs(pod, candidates) {
		out = append(out, types.NamespacedName{Namespace: job.Namespace, Name: job.Name})
	}
	return out
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
