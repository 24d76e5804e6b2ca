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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// DefaultName is the spec.managedBy value the controller answers to when the
// reconcile.Config given to New has no Name.
const DefaultName = "jobkit.dev/job-controller"

// The default rate limits of both work queues (Jobs and orphan pods), as upstream's
// Job controller: a key that keeps failing waits 1s, 2s, 4s, ... up to a minute.
// Options.APIBackoff sets others.
const (
	APIBackoffBase = time.Second
	APIBackoffMax  = time.Minute
)

// Options are the settings of a Controller beyond the Reconciler's configuration.
type Options struct {
	// APIBackoff is the requeue delay of a key whose sync failed on an API error:
	// Base, doubled at each failure in a row, at most Max. Zero fields mean
	// APIBackoffBase and APIBackoffMax.
	APIBackoff plainbackoff.Policy
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
	// apiBase and apiMax are the queues' requeue delays after API errors.
	apiBase, apiMax time.Duration

	broadcaster record.EventBroadcaster // nil when the caller gave Config.Events
	ran         atomic.Bool

	// gone remembers the UIDs of Jobs whose deletion (or replacement) the informer
	// reported, so that the orphan cleanup of their pods needs no GET.
	goneMu sync.Mutex
	gone   map[types.UID]time.Time
	pruned time.Time
	clock  clock.PassiveClock
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
// It sets cfg.ImmutablePods: the pods it lists are the informer's objects.
func New(cs kubernetes.Interface, factory informers.SharedInformerFactory, cfg reconcile.Config, opts Options) (*Controller, error) {
	if cs == nil || factory == nil {
		return nil, errors.New("clientgo.New: the clientset and the informer factory are required")
	}
	base, maxDelay := opts.APIBackoff.Base, opts.APIBackoff.Max
	if base == 0 {
		base = APIBackoffBase
	}
	if maxDelay == 0 {
		maxDelay = APIBackoffMax
	}
	if base < 0 || maxDelay < base {
		return nil, fmt.Errorf("clientgo.New: Options.APIBackoff %v to %v: want a positive base and a maximum not below it", base, maxDelay)
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
		apiBase: base,
		apiMax:  maxDelay,
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(c.apiLimiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: "job"})
	c.orphanQueue = workqueue.NewTypedRateLimitingQueueWithConfig(c.apiLimiter(), workqueue.TypedRateLimitingQueueConfig[string]{Name: "job_orphan_pod"})
	if cfg.Events == nil {
		c.broadcaster = record.NewBroadcaster()
		cfg.Events = c.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: cfg.Name})
	}
	if cfg.ReadOwner == nil {
		// Before adopting orphans, read the Job from the API server, not the
		// informer: a Job deleted since the informer last heard adopts nothing.
		cfg.ReadOwner = reconcile.ObjectOwnerReader(func(ctx context.Context, namespace, name string) (*batchv1.Job, error) {
			return cs.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		}, reconcile.JobType.Workload)
	}
	// Its pods are the informer's objects, which nobody changes in place: each
	// owner's plan reads only the pods that changed since its last sync.
	cfg.ImmutablePods = true
	// Filled in here, so that the controller reads the clock the Reconciler uses.
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	kc := NewClient(cs)
	rec, err := reconcile.New(cfg, kc, reconcile.JobStatusWriter(kc))
	if err != nil {
		return nil, err
	}
	c.rec = rec
	c.clock = cfg.Clock

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
				c.onJob(reconcile.OwnerEvent{New: plan.JobWorkload(job)})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*batchv1.Job)
			cur, ok2 := newObj.(*batchv1.Job)
			if ok1 && ok2 {
				c.onJob(reconcile.OwnerEvent{Old: plan.JobWorkload(old), New: plan.JobWorkload(cur)})
			}
		},
		DeleteFunc: func(obj any) {
			if job, ok := unwrapTombstone(obj).(*batchv1.Job); ok {
				c.onJob(reconcile.OwnerEvent{Old: plan.JobWorkload(job)})
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
func (c *Controller) manages(managedBy *string) bool {
	return ptr.Deref(managedBy, batchv1.JobControllerName) == c.name
}

// apiLimiter is the rate limiter of a queue: apiBase doubling to apiMax per key.
func (c *Controller) apiLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.apiBase, c.apiMax)
}
