package clientgo

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/jobkit/jobkit/examples/internal/adoption"
	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
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

func (c *Controller) enqueue(key string, delay time.Duration) {
	if delay > 0 {
		c.queue.AddAfter(key, delay)
	} else {
		c.queue.Add(key)
	}
}

// onJob handles a Job event (Reconciler.ObserveOwnerEvent): it syncs ours, and
// sends the pods of a Job that was deleted, replaced or has finished to the orphan
// cleanup, remembering a Job that is gone so that its orphans need no live read.
func (c *Controller) onJob(ev reconcile.OwnerEvent) {
	res := c.rec.ObserveOwnerEvent(ev)
	if res.Sync && c.manages(ev.New.Spec.ManagedBy) {
		c.enqueue(res.Key, res.Delay)
	}
	if w := res.OrphanCleanup; w != nil {
		if res.Gone {
			c.markGone(w.UID)
		}
		c.enqueueOrphans(w)
	}
}

// enqueueOrphans queues the pods of w that still carry the tracking finalizer for
// the orphan cleanup.
func (c *Controller) enqueueOrphans(w *plan.Workload) {
	objs, err := c.pods.ByIndex(PodControllerUIDIndex, string(w.UID))
	if err != nil {
		c.log.Error(err, "Listing the pods of a Job for the orphan cleanup", "job", reconcile.Key(w.Namespace, w.Name))
		return
	}
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if owner.BatchJob.HasFinalizer(pod) {
			c.orphanQueue.Add(cache.NewObjectName(pod.Namespace, pod.Name).String())
		}
	}
}

// onPod handles a pod event: it lowers the expectations it fulfils and queues the
// Jobs to sync (batched), the Jobs that may adopt the pod, and the pod itself for the
// orphan cleanup.
func (c *Controller) onPod(ev reconcile.PodEvent) {
	res := c.rec.ObservePodEvent(ev, func(namespace, name string) *finalizers.OrphanOwner {
		return finalizers.JobOwner(c.lookupJob(namespace, name))
	})
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
			for _, job := range adoption.MatchingJobs(pod, jobs) {
				if c.manages(job.Spec.ManagedBy) {
					c.enqueue(reconcile.Key(job.Namespace, job.Name), res.Delay)
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

// listPods lists the pods of w from the informer's index: those it controls and
// the orphans of its namespace that match its selector.
func (c *Controller) listPods(w *plan.Workload) ([]*corev1.Pod, error) {
	owned, err := c.pods.ByIndex(PodControllerUIDIndex, string(w.UID))
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(owned))
	for _, obj := range owned {
		pods = append(pods, obj.(*corev1.Pod))
	}
	if w.Spec.Selector == nil {
		return pods, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
	if err != nil || sel.Empty() {
		return pods, nil // an unusable selector adopts nothing
	}
	orphans, err := c.pods.ByIndex(PodControllerUIDIndex, orphanIndexKey(w.Namespace))
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
