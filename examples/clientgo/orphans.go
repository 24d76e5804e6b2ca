package clientgo

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// Job of this controller counts it (Reconciler.CleanOrphan).
func (c *Controller) cleanOrphan(ctx context.Context, key string) error {
	obj, exists, err := c.pods.GetByKey(key)
	if err != nil || !exists {
		return err
	}
	pod := obj.(*corev1.Pod)
	if !finalizers.Has(pod, finalizers.Name) {
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
	d, err := c.rec.CleanOrphan(ctx, pod, finalizers.JobOwner(job))
	if err == nil && d.Remove {
		c.log.V(2).Info("Removed the tracking finalizer of an orphan pod", "pod", key, "reason", d.Reason)
	}
	return err
}
