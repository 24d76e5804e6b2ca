package plan

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
)

// claimed is the outcome of claim.
type claimed struct {
	// pods are the Job's pods: owned, or adopted in this sync (a copy with the
	// tracking finalizer when the orphan lacks it). Later phases only read it.
	pods           []*corev1.Pod
	adopt, release []PodAction
	warnings       warnings
}

// claim sorts the listed pods into the Job's own, orphans to adopt and pods to
// release. It modifies none of pods.
func claim(w *Workload, listed []*corev1.Pod, kind owner.Kind) claimed {
	var out claimed
	var selector labels.Selector
	if w.Spec.Selector != nil {
		s, err := metav1.LabelSelectorAsSelector(w.Spec.Selector)
		if err != nil {
			out.warnings.addf("spec.selector: %v: no pod is adopted or released", err)
		} else {
			selector = s
		}
	}
	deleting := w.Deleting
	out.pods = make([]*corev1.Pod, 0, len(listed))
	for _, pod := range listed {
		if pod == nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod) // no copy: three allocations per pod saved
		switch {
		case ref != nil && ref.UID == w.UID:
			if selector != nil && !selector.Matches(labels.Set(pod.Labels)) && pod.DeletionTimestamp == nil {
				if !deleting { // as upstream, a Job being deleted releases nothing
					out.release = append(out.release, PodAction{Pod: pod, Reason: "labels no longer match the selector"})
				}
				continue
			}
		case ref != nil:
			continue // another controller's pod
		default:
			if selector == nil || deleting || pod.DeletionTimestamp != nil || !selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			out.adopt = append(out.adopt, PodAction{Pod: pod, Reason: "orphan matching the selector"})
			if !kind.HasFinalizer(pod) {
				// Adoption adds the finalizer, so the pod is tracked from this sync on,
				// as upstream does; a copy, since the listed pod is not ours to change.
				pod = pod.DeepCopy()
				finalizers.EnsureOnPod(&pod.ObjectMeta, kind.Finalizer)
			}
		}
		out.pods = append(out.pods, pod)
	}
	return out
}
