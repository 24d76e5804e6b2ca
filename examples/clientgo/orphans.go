package clientgo

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
)

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
// Job of this controller counts it (Reconciler.CleanOrphan, which confirms a Job
// missing from the informer with the API server). A Job seen deleted is passed as
// gone, so that its orphans cost no GET.
func (c *Controller) cleanOrphan(ctx context.Context, key string) error {
	obj, exists, err := c.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	var own *finalizers.OrphanOwner
	if ref := owner.BatchJob.ControllerOf(pod); ref != nil {
		if c.knownGone(ref.UID) {
			own = &finalizers.OrphanOwner{Gone: true}
		} else {
			own = finalizers.JobOwner(c.lookupJob(pod.Namespace, ref.Name))
		}
	}
	d, err := c.rec.CleanOrphan(ctx, pod, own)
	if err == nil && d.Remove {
		c.log.V(2).Info("Removed the tracking finalizer of an orphan pod", "pod", key, "reason", d.Reason)
	}
	return err
}
