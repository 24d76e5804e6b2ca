package clientgo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

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
	if !c.manages(job.Spec.ManagedBy) {
		return reconcile.Result{}, nil
	}
	return c.rec.Sync(ctx, plan.JobWorkload(job), c.listPods)
}
