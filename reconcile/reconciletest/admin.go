package reconciletest

import (
	"context"
	"fmt"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
)

// Labels the API server adds to the pod template of a Job without a manual selector.
const (
	labelControllerUID       = "batch.kubernetes.io/controller-uid"
	labelJobName             = "batch.kubernetes.io/job-name"
	legacyLabelControllerUID = "controller-uid"
	legacyLabelJobName       = "job-name"
)

// NewJob returns a NonIndexed Job namespace/name with the given completions and
// parallelism, restartPolicy Never and one container "main": a starting point that
// tests change as they need.
func NewJob(namespace, name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions),
			Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			}},
		},
	}
}

// defaultJob applies the API defaults and the generated selector to j.
func defaultJob(j *batchv1.Job) {
	s := &j.Spec
	defaultJobSpec(s)
	if ptr.Deref(s.ManualSelector, false) {
		return
	}
	uid := string(j.UID)
	if s.Template.Labels == nil {
		s.Template.Labels = map[string]string{}
	}
	s.Template.Labels[labelControllerUID] = uid
	s.Template.Labels[legacyLabelControllerUID] = uid
	s.Template.Labels[labelJobName] = j.Name
	s.Template.Labels[legacyLabelJobName] = j.Name
	if s.Selector == nil {
		s.Selector = &metav1.LabelSelector{}
	}
	if s.Selector.MatchLabels == nil {
		s.Selector.MatchLabels = map[string]string{}
	}
	s.Selector.MatchLabels[labelControllerUID] = uid
}

// defaultJobSpec applies the API defaults of a Job's spec fields to s (not the
// generated selector).
func defaultJobSpec(s *batchv1.JobSpec) {
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions, s.Parallelism = ptr.To[int32](1), ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			s.BackoffLimit = ptr.To[int32](6)
		}
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if s.PodFailurePolicy != nil {
		for i := range s.PodFailurePolicy.Rules {
			for k := range s.PodFailurePolicy.Rules[i].OnPodConditions {
				p := &s.PodFailurePolicy.Rules[i].OnPodConditions[k]
				if p.Status == "" {
					p.Status = corev1.ConditionTrue
				}
			}
		}
	}
}

// CollectGarbage deletes, as the garbage collector would with background
// propagation, every pod whose owner references all name owners the cluster knows
// of (batch/v1 Jobs, and owners of the cluster's Options.Owner) that no longer
// exist with the referenced UID. A reference to any other kind, or to a live owner
// of any kind, keeps the pod. It returns how many deletions it issued. Pods with
// finalizers keep existing, with a deletionTimestamp, until their finalizers are
// removed.
func (c *Cluster) CollectGarbage() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := func(ns string, ref *metav1.OwnerReference) bool {
		switch {
		case owner.BatchJob.Matches(ref):
			return c.jobs.liveUIDLocked(ns, ref.Name) == ref.UID
		case c.owner == owner.BatchJob || !c.owner.Matches(ref):
			return true // a kind the cluster does not know: never collected
		case c.custom == nil:
			return false
		}
		return c.custom.liveUIDLocked(ns, ref.Name) == ref.UID
	}
	n := 0
	for _, p := range c.sortedPodsLocked("") {
		if len(p.OwnerReferences) == 0 || p.DeletionTimestamp != nil {
			continue
		}
		orphaned := true
		for i := range p.OwnerReferences {
			if live(p.Namespace, &p.OwnerReferences[i]) {
				orphaned = false
			}
		}
		if orphaned && c.deletePodLocked(p.Namespace, p.Name, p.UID, nil) == nil {
			n++
		}
	}
	return n
}

// AddPod creates a pod as another actor would (a user, another controller): like
// CreatePod, but no fault applies and the call log does not record it.
func (c *Cluster) AddPod(pod *corev1.Pod) (*corev1.Pod, error) {
	if pod == nil {
		return nil, apierrors.NewBadRequest("pod is nil")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, err := c.createPodLocked(pod)
	if err != nil {
		return nil, err
	}
	return p.DeepCopy(), nil
}

// RemovePod deletes a pod as another actor would, with the pod's grace period (or
// gracePeriod when not nil; 0 forces an immediate deletion once no finalizer is
// left). No fault applies and the call log does not record it.
func (c *Cluster) RemovePod(namespace, name string, gracePeriod *int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deletePodLocked(namespace, name, "", gracePeriod)
}

// PatchPodAs applies a strategic merge patch as another actor would: no fault
// applies and the call log does not record it.
func (c *Cluster) PatchPodAs(namespace, name string, data []byte) (*corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, _, err := c.patchPodLocked(namespace, name, types.StrategicMergePatchType, data)
	if err != nil {
		return nil, err
	}
	return p.DeepCopy(), nil
}

// TerminateNamespace makes every later pod creation in namespace fail as in a
// namespace being deleted (namespaceTerminatingError). Existing objects stay.
func (c *Cluster) TerminateNamespace(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.terminating.Insert(namespace)
}

// GetPod returns a copy of the stored pod, or a NotFound error. It is also
// reconcile.PodClient's live read, which the Reconciler makes after a creation
// refused with AlreadyExists; as every read of the Cluster, it is not in the call
// log and no Fault applies to it.
func (c *Cluster) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delayLocked(c.readDelay)
	p, ok := c.pods[key(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, name)
	}
	return p.DeepCopy(), nil
}

// ListPods returns copies of the stored pods of namespace (all namespaces when
// empty), in creation order.
func (c *Cluster) ListPods(namespace string) []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	pods := c.sortedPodsLocked(namespace)
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

// describePods summarises the stored pods controlled by uid for test failures.
func (c *Cluster) describePods(namespace string, uid types.UID) string {
	s := ""
	for _, p := range c.ListPods(namespace) {
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID != uid {
			continue
		}
		s += fmt.Sprintf("\n  %s %s finalizers=%v deleting=%v", p.Name, p.Status.Phase, p.Finalizers, p.DeletionTimestamp != nil)
	}
	return s
}
