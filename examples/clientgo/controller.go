package clientgo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// DefaultName is the spec.managedBy value the controller answers to when the
// reconcile.Config given to New has no Name.
const DefaultName = "jobkit.dev/job-controller"

// Rate limits of both work queues (Jobs and orphan pods), as upstream's Job
// controller: a key that keeps failing waits 1s, 2s, 4s, ... up to a minute.
const (
	APIBackoffBase = time.Second
	APIBackoffMax  = time.Minute
)

// PodControllerUIDIndex is the name of the pod informer index the controller adds:
// pods by the UID of their controller, and pods without controller under
// "orphan/<namespace>".
const PodControllerUIDIndex = "jobkit.dev/controller-uid"

// orphanIndexKey is the index value of the pods of namespace without controller. A
// UID never contains a slash, so it cannot collide with one.
func orphanIndexKey(namespace string) string { return "orphan/" + namespace }

func indexByControllerUID(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{orphanIndexKey(pod.Namespace)}, nil
}

// Controller is a batch/v1 Job controller on client-go shared informers: it syncs
// the Jobs whose spec.managedBy is its name with a reconcile.Reconciler, and removes
// the tracking finalizer of orphan pods. Build it with New, start it with Run.
type Controller struct {
	cs      kubernetes.Interface
	factory informers.SharedInformerFactory
	rec     *reconcile.Reconciler
	name    string
	log     logr.Logger

	jobInformer, podInformer cache.SharedIndexInformer
	jobLister                batchlisters.JobLister
	pods                     cache.Indexer
	handlers                 []handlerRegistration

	queue       workqueue.TypedRateLimitingInterface[string]
	orphanQueue workqueue.TypedRateLimitingInterface[string]

	broadcaster record.EventBroadcaster // nil when the caller gave Config.Events
	ran         atomic.Bool

	// gone remembers the UIDs of Jobs whose deletion (or replacement) the informer
	// reported, so that the orphan cleanup of their pods needs no GET.
	goneMu sync.Mutex
	gone   map[types.UID]time.Time
	pruned time.Time
	clock  clock.PassiveClock
}

// goneTTL bounds how long a deleted Job's UID is remembered; later orphans of it are
// confirmed with a GET.
const goneTTL = 10 * time.Minute

// markGone records that the Job with uid no longer exists.
func (c *Controller) markGone(uid types.UID) {
	c.goneMu.Lock()
	defer c.goneMu.Unlock()
	now := c.clock.Now()
	if now.Sub(c.pruned) > goneTTL/10 {
		c.pruned = now
		for u, at := range c.gone {
			if now.Sub(at) > goneTTL {
				delete(c.gone, u)
			}
		}
	}
	c.gone[uid] = now
}

// knownGone reports whether the Job with uid was seen deleted.
func (c *Controller) knownGone(uid types.UID) bool {
	c.goneMu.Lock()
	defer c.goneMu.Unlock()
	_, ok := c.gone[uid]
	return ok
}

type handlerRegistration struct {
	informer cache.SharedIndexInformer
	handle   cache.ResourceEventHandlerRegistration
}

// New returns a Controller that talks to the API server through cs and reads Jobs
// and pods from factory's informers. cfg configures the Reconciler; an empty
// cfg.Name means DefaultName, and a nil cfg.Events means events recorded on the Jobs
// through the API (source component: the name). New adds the pod index
// PodControllerUIDIndex and its event handlers to the informers, so the factory must
// not have been started yet, unless an earlier Controller already added the index.
func New(cs kubernetes.Interface, factory informers.SharedInformerFactory, cfg reconcile.Config) (*Controller, error) {
	if cs == nil || factory == nil {
		return nil, errors.New("clientgo.New: the clientset and the informer factory are required")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	c := &Controller{
		cs:      cs,
		factory: factory,
		name:    cfg.Name,
		log:     cfg.Logger.WithValues("controller", cfg.Name),
		gone:    map[types.UID]time.Time{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](APIBackoffBase, APIBackoffMax),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "job"}),
		orphanQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](APIBackoffBase, APIBackoffMax),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "job_orphan_pod"}),
	}
	if cfg.Events == nil {
		c.broadcaster = record.NewBroadcaster()
		cfg.Events = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: cfg.Name})
	}
	rec, err := reconcile.New(cfg, NewClient(cs))
	if err != nil {
		return nil, err
	}
	c.rec = rec
	c.clock = rec.Config().Clock

	jobs := factory.Batch().V1().Jobs()
	c.jobInformer, c.jobLister = jobs.Informer(), jobs.Lister()
	c.podInformer = factory.Core().V1().Pods().Informer()
	c.pods = c.podInformer.GetIndexer()
	if _, ok := c.pods.GetIndexers()[PodControllerUIDIndex]; !ok {
		if err := c.podInformer.AddIndexers(cache.Indexers{PodControllerUIDIndex: indexByControllerUID}); err != nil {
			return nil, fmt.Errorf("clientgo.New: add pod index %s: %w", PodControllerUIDIndex, err)
		}
	}
	if err := c.addHandler(c.jobInformer, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if job, ok := obj.(*batchv1.Job); ok {
				c.onJob(reconcile.JobEvent{Type: reconcile.JobAdded, New: job})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*batchv1.Job)
			cur, ok2 := newObj.(*batchv1.Job)
			if ok1 && ok2 {
				c.onJob(reconcile.JobEvent{Type: reconcile.JobUpdated, Old: old, New: cur})
			}
		},
		DeleteFunc: func(obj any) {
			if job, ok := unwrapTombstone(obj).(*batchv1.Job); ok {
				c.onJob(reconcile.JobEvent{Type: reconcile.JobDeleted, Old: job})
			}
		},
	}); err != nil {
		return nil, err
	}
	if err := c.addHandler(c.podInformer, cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				c.onPod(reconcile.PodEvent{Type: reconcile.PodAdded, New: pod})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Pod)
			cur, ok2 := newObj.(*corev1.Pod)
			if ok1 && ok2 {
				c.onPod(reconcile.PodEvent{Type: reconcile.PodUpdated, Old: old, New: cur})
			}
		},
		DeleteFunc: func(obj any) {
			if pod, ok := unwrapTombstone(obj).(*corev1.Pod); ok {
				c.onPod(reconcile.PodEvent{Type: reconcile.PodDeleted, Old: pod})
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) addHandler(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
	handle, err := inf.AddEventHandler(h)
	if err != nil {
		return fmt.Errorf("clientgo.New: add event handler: %w", err)
	}
	c.handlers = append(c.handlers, handlerRegistration{inf, handle})
	return nil
}

// unwrapTombstone returns the last known object of a delete event whose deletion the
// informer missed (it found out on a relist), or obj itself.
func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// Reconciler returns the Reconciler the controller syncs Jobs with (for its stores
// and configuration).
func (c *Controller) Reconciler() *reconcile.Reconciler { return c.rec }

// HasSynced reports whether the Job and pod informers have synced: the readiness
// of a controller whose informer factory was started.
func (c *Controller) HasSynced() bool {
	return c.jobInformer.HasSynced() && c.podInformer.HasSynced()
}

// Name returns the spec.managedBy value the controller answers to.
func (c *Controller) Name() string { return c.name }

// manages reports whether job is this controller's (an unset managedBy belongs to
// the built-in Job controller).
func (c *Controller) manages(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.ManagedBy, batchv1.JobControllerName) == c.name
}

func (c *Controller) enqueue(key string, delay time.Duration) {
	if delay > 0 {
		c.queue.AddAfter(key, delay)
	} else {
		c.queue.Add(key)
	}
}

// onJob handles a Job event: forget a deleted or recreated Job, sync ours, and send
// the pods of a Job that was deleted, replaced or has finished to the orphan cleanup.
func (c *Controller) onJob(ev reconcile.JobEvent) {
	m := c.rec.ObserveJobEvent(ev)
	if m.Key == "" {
		return
	}
	if m.Sync && ev.New != nil && c.manages(ev.New) {
		c.enqueue(m.Key, m.Delay)
	}
	if m.OrphanCleanup {
		job := ev.Old
		switch {
		case ev.Type == reconcile.JobUpdated && ev.Old.UID == ev.New.UID:
			job = ev.New // it has finished
		case job == nil:
			job = ev.New
			fallthrough
		default: // deleted, or replaced by a Job with a new UID
			if job != nil {
				c.markGone(job.UID)
			}
		}
		c.enqueueOrphans(job)
	}
}

// enqueueOrphans queues the pods of job that still carry the tracking finalizer for
// the orphan cleanup.
func (c *Controller) enqueueOrphans(job *batchv1.Job) {
	if job == nil {
		return
	}
	objs, err := c.pods.ByIndex(PodControllerUIDIndex, string(job.UID))
	if err != nil {
		c.log.Error(err, "Listing the pods of a Job for the orphan cleanup", "job", reconcile.Key(job))
		return
	}
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if finalizers.Has(pod) {
			c.orphanQueue.Add(cache.NewObjectName(pod.Namespace, pod.Name).String())
		}
	}
}

// onPod handles a pod event: it lowers the expectations it fulfils and queues the
// Jobs to sync (batched), the Jobs that may adopt the pod, and the pod itself for the
// orphan cleanup.
func (c *Controller) onPod(ev reconcile.PodEvent) {
	res := c.rec.ObservePodEvent(ev, c.lookupJob)
	for _, key := range res.Sync {
		c.enqueue(key, res.Delay)
	}
	pod := ev.New
	if pod == nil {
		pod = ev.Old
	}
	if res.Adoptable {
		jobs, err := c.jobLister.Jobs(pod.Namespace).List(labels.Everything())
		if err == nil {
			for _, job := range reconcile.MatchingJobs(pod, jobs) {
				if c.manages(job) {
					c.enqueue(reconcile.Key(job), res.Delay)
				}
			}
		}
	}
	if res.OrphanCleanup {
		c.orphanQueue.Add(cache.NewObjectName(pod.Namespace, pod.Name).String())
	}
}

func (c *Controller) lookupJob(namespace, name string) *batchv1.Job {
	job, err := c.jobLister.Jobs(namespace).Get(name)
	if err != nil {
		return nil
	}
	return job
}

// listPods lists the pods of job from the informer's index: those it controls and
// the orphans of its namespace that match its selector.
func (c *Controller) listPods(job *batchv1.Job) ([]*corev1.Pod, error) {
	owned, err := c.pods.ByIndex(PodControllerUIDIndex, string(job.UID))
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(owned))
	for _, obj := range owned {
		pods = append(pods, obj.(*corev1.Pod))
	}
	if job.Spec.Selector == nil {
		return pods, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || sel.Empty() {
		return pods, nil // an unusable selector adopts nothing
	}
	orphans, err := c.pods.ByIndex(PodControllerUIDIndex, orphanIndexKey(job.Namespace))
	if err != nil {
		return nil, err
	}
	for _, obj := range orphans {
		pod := obj.(*corev1.Pod)
		if sel.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// Run starts the informers (if the factory has not started them), waits for their
// caches, and runs workers Job workers and as many orphan-pod workers until ctx is
// cancelled. It returns once every worker has stopped, after removing its event
// handlers from the informers; the informers themselves stop with ctx (call the
// factory's Shutdown to wait for them). Run may be called once.
func (c *Controller) Run(ctx context.Context, workers int) error {
	if workers < 1 {
		return fmt.Errorf("clientgo: Run: workers = %d, want at least 1", workers)
	}
	if !c.ran.CompareAndSwap(false, true) {
		return errors.New("clientgo: Run called twice")
	}
	defer c.removeHandlers()
	defer c.queue.ShutDown()
	defer c.orphanQueue.ShutDown()
	if c.broadcaster != nil {
		c.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.cs.CoreV1().Events("")})
		defer c.broadcaster.Shutdown()
	}

	c.log.Info("Starting Job controller", "workers", workers)
	c.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.jobInformer.HasSynced, c.podInformer.HasSynced) {
		return fmt.Errorf("clientgo: caches not synced: %w", context.Cause(ctx))
	}

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processJob(ctx) {
			}
		})
		wg.Go(func() {
			for c.processOrphan(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.log.Info("Stopping Job controller")
	c.queue.ShutDown()
	c.orphanQueue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) removeHandlers() {
	for _, h := range c.handlers {
		_ = h.informer.RemoveEventHandler(h.handle)
	}
}

// processJob syncs one Job key from the queue; it returns false once the queue is
// shut down.
func (c *Controller) processJob(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if ctx.Err() != nil {
		return true // shutting down: drain without calling the API
	}
	res, err := c.syncJob(ctx, key)
	switch {
	case err != nil:
		if apierrors.IsNotFound(err) {
			// The Job went away during the sync; its delete event forgets it, and
			// the retry finds it gone.
			c.log.V(2).Info("Job deleted during its sync", "job", key, "err", err.Error())
		} else {
			c.log.Error(err, "Syncing Job", "job", key)
		}
		c.queue.AddRateLimited(key)
	case res.Requeue:
		c.queue.AddRateLimited(key)
	default:
		c.queue.Forget(key)
		if res.RequeueAfter > 0 {
			c.queue.AddAfter(key, res.RequeueAfter)
		}
	}
	return true
}

func (c *Controller) syncJob(ctx context.Context, key string) (reconcile.Result, error) {
	name, err := cache.ParseObjectName(key)
	if err != nil {
		return reconcile.Result{}, nil // a malformed key cannot get better
	}
	job, err := c.jobLister.Jobs(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) {
		c.rec.Forget(key)
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if !c.manages(job) {
		return reconcile.Result{}, nil
	}
	return c.rec.SyncWith(ctx, job, c.listPods)
}

// processOrphan runs the orphan cleanup of one pod key; it returns false once the
// queue is shut down.
func (c *Controller) processOrphan(ctx context.Context) bool {
	key, quit := c.orphanQueue.Get()
	if quit {
		return false
	}
	defer c.orphanQueue.Done(key)
	if ctx.Err() != nil {
		return true
	}
	if err := c.cleanOrphan(ctx, key); err != nil {
		c.log.Error(err, "Removing the tracking finalizer of an orphan pod", "pod", key)
		c.orphanQueue.AddRateLimited(key)
		return true
	}
	c.orphanQueue.Forget(key)
	return true
}

// cleanOrphan removes the tracking finalizer of the pod key when no live, unfinished
// Job of this controller counts it (Reconciler.CleanOrphan).
func (c *Controller) cleanOrphan(ctx context.Context, key string) error {
	obj, exists, err := c.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if !finalizers.Has(pod) {
		return nil
	}
	var job *batchv1.Job
	if ref := metav1.GetControllerOfNoCopy(pod); ref != nil && owner.BatchJob.Matches(ref) {
		job = c.lookupJob(pod.Namespace, ref.Name)
		if (job == nil || job.UID != ref.UID) && !c.knownGone(ref.UID) {
			// The Job informer may lag the pod informer (a Job created by someone
			// else a moment ago): confirm with the API server before taking the
			// finalizer of a pod whose Job may be live.
			live, err := c.cs.BatchV1().Jobs(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			switch {
			case err == nil:
				job = live
			case apierrors.IsNotFound(err):
				job = nil
			default:
				return fmt.Errorf("get Job %s/%s: %w", pod.Namespace, ref.Name, err)
			}
		}
	}
	d, err := c.rec.CleanOrphan(ctx, pod, job)
	if err == nil && d.Remove {
		c.log.V(2).Info("Removed the tracking finalizer of an orphan pod", "pod", key, "reason", d.Reason)
	}
	return err
}
