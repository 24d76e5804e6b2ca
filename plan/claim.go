package plan

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/jobkit/jobkit/finalizers"
)

// claimed is the outcome of claim.
type claimed struct {
	// pods are the Job's pods: owned, or adopted in this sync (a copy with the
	// tracking finalizer when the orphan lacks it). Later phases only read it.
	pods []*corev1.Pod
	// infos are the facts of pods, in the same order (factReader).
	infos          []podInfo
	adopt, release []PodAction
	warnings       warnings
}

// claim sorts the listed pods into the Job's own, orphans to adopt and pods to
// release, and reads the facts of each of the Job's pods (readFacts) as it takes it,
// so that the listed pods are walked once: the later phases read the facts, and
// touch a pod again only for the few that still carry the tracking finalizer or that
// a failure policy matches. A pod in an informer's cache is scattered over many
// cache lines far from the others, so each walk over the pods costs their cache
// misses again. It modifies none of pods.
func claim(e *env, listed []*corev1.Pod) claimed {
	w, kind := e.wl, e.owner
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
	// Never grown, so pointers into it stay valid.
	out.infos = make([]podInfo, 0, len(listed))
	var f factReader
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
		out.infos = append(out.infos, podInfo{})
		pi := &out.infos[len(out.infos)-1]
		f.read(e, pod, pi)
	}
	out.warnings.add(f.warnings)
	return out
}
