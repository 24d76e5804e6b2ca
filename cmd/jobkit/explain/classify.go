package explain

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// classification is what Explain knows of the pods beyond the plan.
type classification struct {
	pods []Pod
	// own are the Job's pods as plan counts them: owned and still matching, plus
	// orphans to adopt.
	own []*corev1.Pod
	// owned counts the pods controlled by the Job by class: what the status counters
	// of the last sync counted (orphans are counted once adopted).
	owned map[Class]int
	// onlyFailed is podReplacementPolicy Failed with the API's default.
	onlyFailed bool
	// failedIndexes are the failures of each index of an Indexed owner that has
	// any (countIndexFailures).
	failedIndexes map[int]int32
}

func onlyFailed(w *workload) bool {
	return w.Spec.EffectivePodReplacementPolicy() == batchv1.Failed
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func isTerminal(pod *corev1.Pod) bool {
	return podutil.IsTerminal(pod)
}

func classify(w *workload, pods []*corev1.Pod, p *plan.Plan) *classification {
	c := &classification{owned: map[Class]int{}, onlyFailed: onlyFailed(w)}
	var selector labels.Selector
	if w.Spec.Selector != nil {
		if s, err := metav1.LabelSelectorAsSelector(w.Spec.Selector); err == nil {
			selector = s
		}
	}
	adopt, release := actionSet(p.Adopt), actionSet(p.Release)
	uncounted := map[string]string{}
	if u := w.Status.UncountedTerminatedPods; u != nil {
		for _, uid := range u.Succeeded {
			uncounted[string(uid)] = "succeeded"
		}
		for _, uid := range u.Failed {
			uncounted[string(uid)] = "failed"
		}
	}
	indexed := ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	var active []*corev1.Pod
	at := map[*corev1.Pod]int{}
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		out := Pod{Name: pod.Name, UID: string(pod.UID), Phase: string(pod.Status.Phase), Finalizer: w.kind.HasFinalizer(pod)}
		if out.Phase == "" {
			out.Phase = string(corev1.PodPending)
		}
		if indexed {
			if ix, err := indexes.PodIndex(w.kind, pod); err == nil {
				out.Index = ptr.To(ix)
			}
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case pod.Namespace != w.Namespace:
			out.Classes, out.Note = []Class{ClassIgnored}, "namespace "+pod.Namespace
		case release[pod]:
			out.Classes = []Class{ClassReleased}
			out.Note = "labels no longer match the selector"
		case ref != nil && ref.UID != w.UID:
			out.Classes = []Class{ClassIgnored}
			if w.kind.Matches(ref) && ref.Name == w.Name {
				out.Note = fmt.Sprintf("controlled by an earlier %s %s (uid %s)", w.noun, ref.Name, ref.UID)
			} else {
				out.Note = fmt.Sprintf("controlled by %s %s", ref.Kind, ref.Name)
			}
		case ref == nil && !adopt[pod]:
			// An orphan the plan does not adopt: say why.
			if selector == nil || !selector.Matches(labels.Set(pod.Labels)) {
				out.Classes = []Class{ClassIgnored}
				out.Note = "no controller, and the " + w.noun + "'s selector does not match"
				break
			}
			out.Classes = []Class{ClassOrphan}
			switch {
			case p.Skip != "":
				out.Note = "not adopted: " + p.Skip
			case w.finished():
				out.Note = "not adopted: the " + w.noun + " has finished"
			case w.Deleting:
				out.Note = "not adopted: the " + w.noun + " is being deleted"
			case pod.DeletionTimestamp != nil:
				out.Note = "not adopted: the pod is being deleted"
			}
		default:
			if ref == nil {
				out.Classes = append(out.Classes, ClassOrphan)
			}
			c.own = append(c.own, pod)
			terminal := isTerminal(pod)
			deleting := pod.DeletionTimestamp != nil
			switch {
			case !terminal && !deleting:
				out.Classes = append(out.Classes, ClassActive)
				if isReady(pod) {
					out.Classes = append(out.Classes, ClassReady)
				}
				active = append(active, pod)
				at[pod] = len(c.pods)
			case !terminal:
				out.Classes = append(out.Classes, ClassTerminating)
			case pod.Status.Phase == corev1.PodSucceeded:
				out.Classes = append(out.Classes, ClassSucceeded)
			default:
				out.Classes = append(out.Classes, ClassFailed)
			}
			finished := terminal || (deleting && !c.onlyFailed)
			switch {
			case finished && out.Finalizer && w.finished():
				out.Classes = append(out.Classes, ClassFinalizerLeft)
				out.Note = "the " + w.noun + " has finished: not counted again, only its finalizer is removed"
			case finished && out.Finalizer:
				out.Classes = append(out.Classes, ClassUncounted)
				if kind, ok := uncounted[out.UID]; ok {
					out.Note = "in status.uncountedTerminatedPods." + kind
				} else {
					out.Note = "not yet in status.uncountedTerminatedPods"
				}
			}
		}
		c.pods = append(c.pods, out)
	}
	if indexed && w.Spec.Completions != nil {
		for _, s := range indexes.Strays(w.kind, active, int(*w.Spec.Completions)).Remove {
			i := at[s.Pod]
			switch s.Reason {
			case plainindexes.StrayDuplicate:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassDuplicateIndex)
				c.pods[i].Note = fmt.Sprintf("another active pod of index %d is kept", s.Index)
			case plainindexes.StrayOutOfRange:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassStray)
				c.pods[i].Note = fmt.Sprintf("index %d at or above completions %d", s.Index, *w.Spec.Completions)
			default:
				c.pods[i].Classes = append(c.pods[i].Classes, ClassStray)
				c.pods[i].Note = "no valid completion index"
			}
		}
	}
	countIndexFailures(w, c)
	for _, pod := range c.pods {
		if slices.Contains(pod.Classes, ClassOrphan) {
			continue
		}
		for _, cl := range pod.Classes {
			c.owned[cl]++
		}
	}
	return c
}

// actionSet indexes the pods of plan actions, so that a lookup per pod stays O(1).
func actionSet(as []plan.PodAction) map[*corev1.Pod]bool {
	out := make(map[*corev1.Pod]bool, len(as))
	for _, a := range as {
		out[a.Pod] = true
	}
	return out
}
