package sim

import (
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// adopt checks a pod the owner just adopted: an orphan (the generator makes them
// from the Job's template) that matches the selector and gets the tracking
// finalizer in the adopting write, taken by an owner that still exists. From then
// on it is counted like a pod the controller created (an index it brings may
// already be done: that is no creation), except that the failure chain of its index
// becomes uncertain (an orphan carries no failure count).
func (m *model) adopt(ps *podState, pod *corev1.Pod) {
	m.adoptions++
	ps.adopted = true
	where := fmt.Sprintf("adopted pod #%d %s (%s%s)", ps.ordinal, pod.Name, describePod(pod), indexText(ps.index))
	switch {
	case m.deleted:
		m.w.violate(InvAdoption, "%s was adopted by the deleted %v", where, m.w.kind)
	case !ps.finalizer:
		m.w.violate(InvAdoption, "%s lacks the tracking finalizer %s", where, m.w.kind.Finalizer)
	case !matchesSelector(m.job.Spec.Selector, pod.Labels):
		m.w.violate(InvAdoption, "%s does not match the selector %v (labels %v)", where, m.job.Spec.Selector, pod.Labels)
	case pod.DeletionTimestamp != nil:
		m.w.violate(InvAdoption, "%s is being deleted", where)
	}
	if m.indexed() && ps.index >= 0 {
		m.dup[ps.index] = true
	}
}

// release records that the owner released ps (its controller reference is gone in
// pod). The same write must remove the tracking finalizer. A released pod is not
// the owner's: it is not counted, unless the status recorded it before the release
// (in an uncounted list, or its success in completedIndexes); the record is then
// counted once, as recorded, whatever the pod did since (a pod recorded as failed
// while the Job was failing may have succeeded before its release). The failure
// count of its index leaves with it: that index is only checked loosely from then
// on.
func (m *model) release(ps *podState, pod *corev1.Pod) {
	m.releases++
	prev := ps.last
	ps.last = pod
	ps.released = true
	if m.hasFinalizer(pod) {
		m.w.violate(InvReleased, "released pod #%d %s (%s) keeps the tracking finalizer %s", ps.ordinal, pod.Name, describePod(pod), m.w.kind.Finalizer)
		return
	}
	if m.indexed() && ps.index >= 0 {
		m.dup[ps.index] = true
		if ps.finalizer && prev.Status.Phase == corev1.PodFailed {
			m.failures[ps.index]++ // its index did fail, and may be failed for it
		}
	}
	if !ps.finalizer {
		return // already counted or not when its finalizer went
	}
	ps.finalizer = false
	ps.outcome = notCounted
	switch {
	case m.deleted:
	case m.inS[ps.uid]:
		ps.outcome = wonSucceeded
		m.succeeded++
	case m.inF[ps.uid]:
		ps.outcome = wonFailed
		m.failed++
	case m.indexed() && prev.Status.Phase == corev1.PodSucceeded && parseIndexes(m.job.Status.CompletedIndexes)[ps.index]:
		ps.outcome = wonSucceeded
		m.succeededIx[ps.index] = true
	}
}

// matchesSelector reads a label selector's matchLabels and the In, NotIn, Exists
// and DoesNotExist expressions; nil matches nothing.
func matchesSelector(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return false
	}
	for k, v := range sel.MatchLabels {
		if got, ok := set[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range sel.MatchExpressions {
		got, ok := set[e.Key]
		in := ok && slices.Contains(e.Values, got)
		switch e.Operator {
		case metav1.LabelSelectorOpIn:
			if !in {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if in {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if !ok {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// --- Reading objects, independently of the library. ---

func ownedBy(pod *corev1.Pod, uid types.UID) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.UID == uid {
			return true
		}
	}
	return false
}

// hasFinalizer reports whether pod carries the owner kind's tracking finalizer.
func (m *model) hasFinalizer(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, m.w.kind.Finalizer)
}

// checkOwner checks a new pod of the owner: its controller reference names the
// owner's kind (group and kind), and it carries no other kind's tracking finalizer
// (the batch/v1 Job's for a custom owner).
func (m *model) checkOwner(pod *corev1.Pod) {
	kind := m.w.kind
	for _, ref := range pod.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller || ref.UID != m.uid {
			continue
		}
		group, _, found := strings.Cut(ref.APIVersion, "/")
		if !found {
			group = ""
		}
		if ref.Kind != kind.Kind || group != kind.Group {
			m.w.violate(InvWrongOwner, "pod %s has a controller reference to %s %s, the owner is a %s", pod.Name, ref.APIVersion, ref.Kind, kind)
			return
		}
	}
	if kind.Finalizer != batchv1.JobTrackingFinalizer && slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer) {
		m.w.violate(InvWrongOwner, "pod %s of a %s carries the batch/v1 Job's tracking finalizer %s", pod.Name, kind, batchv1.JobTrackingFinalizer)
	}
}
