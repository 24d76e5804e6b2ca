package sim

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// classify counts a pod whose tracking finalizer was just removed; prev is its state
// at that write.
func (m *model) classify(ps *podState, prev *corev1.Pod) {
	job := m.job
	spec := &job.Spec
	completions := int(deref32(spec.Completions, -1))
	validIndex := !m.indexed() || (ps.index >= 0 && ps.index < completions)
	onlyFailed := replacementPolicy(spec) == batchv1.Failed
	failing := condTrue(job, batchv1.JobFailureTarget) || condTrue(job, batchv1.JobFailed)

	out := notCounted
	ownFailure, ignored, failIndex := false, false, false
	switch {
	case prev.Status.Phase == corev1.PodSucceeded:
		out = wonSucceeded
	case prev.Status.Phase == corev1.PodFailed:
		ownFailure = true
		action, matched := matchPolicy(spec.PodFailurePolicy, prev)
		ignored = matched && action == batchv1.PodFailurePolicyActionIgnore
		failIndex = matched && action == batchv1.PodFailurePolicyActionFailIndex
		if !ignored {
			out = wonFailed
		}
	case prev.DeletionTimestamp != nil && !onlyFailed:
		ownFailure = true
		out = wonFailed
	case failing:
		out = wonFailed
	}
	if !validIndex {
		// A failure recorded while its index was valid stays a failure when an
		// elastic scale-down takes the index away before the finalizer goes (as
		// upstream); whether it was recorded in time is a race the model accepts
		// either way. A pod that is no failure by its state when the finalizer goes
		// (a success, an ignored failure) is not counted, recorded or not.
		recordedBefore := out == wonFailed && ps.index >= 0 && ps.index < m.maxCompletions && m.inF[ps.uid]
		if !recordedBefore {
			out = notCounted
		}
		ownFailure = false
	}
	// An index is finished by its first outcome: a late success of an index that
	// has failed is not counted, and a late failure of a succeeded index does not
	// count against it.
	if m.indexed() && out == wonSucceeded && parseIndexes(deref(job.Status.FailedIndexes))[ps.index] {
		out = notCounted
	}
	// (The status written before the finalizers go may already hold the success of
	// another pod of the index, seen in the same sync.)
	indexDone := m.indexed() && (m.succeededIx[ps.index] || parseIndexes(job.Status.CompletedIndexes)[ps.index])
	ps.outcome = out
	where := fmt.Sprintf("pod #%d %s (%s%s)", ps.ordinal, prev.Name, describePod(prev), indexText(ps.index))

	// Recorded first: the status must hold the pod before its finalizer goes.
	switch {
	case out == wonSucceeded && m.indexed():
		if !parseIndexes(job.Status.CompletedIndexes)[ps.index] {
			m.w.violate(InvRecordFirst, "%s lost its finalizer as a success, but completedIndexes %q does not hold its index",
				where, job.Status.CompletedIndexes)
		}
		m.succeededIx[ps.index] = true
	case out == wonSucceeded:
		if !m.inS[ps.uid] {
			m.w.violate(InvCount, "%s lost its finalizer as a success, but it is not in uncountedTerminatedPods.succeeded (%s)",
				where, m.ledgerText(ps.uid))
		}
		m.succeeded++
	case out == wonFailed:
		if !m.inF[ps.uid] {
			m.w.violate(InvCount, "%s lost its finalizer as a failure, but it is not in uncountedTerminatedPods.failed (%s)",
				where, m.ledgerText(ps.uid))
		}
		m.failed++
	default:
		if m.inS[ps.uid] || m.inF[ps.uid] {
			m.w.violate(InvCount, "%s lost its finalizer and must not be counted (%s), but it is in uncountedTerminatedPods (%s)",
				where, notCountedWhy(prev, ignored, validIndex, m.indexed() && prev.Status.Phase == corev1.PodSucceeded), m.ledgerText(ps.uid))
		}
	}

	// Per-index failures. The failure count of an index travels in the annotations
	// of its pods; a pod stopped by scale-down or suspend takes the count of
	// earlier failures with it, and the index may start again from zero (upstream
	// behaves the same). Such an index is only checked loosely from then on.
	if m.indexed() && spec.BackoffLimitPerIndex != nil && validIndex && out == notCounted && isActive(prev) && m.indexFailedBefore(ps) {
		m.dup[ps.index] = true
	}
	if m.indexed() && spec.BackoffLimitPerIndex != nil && ownFailure && !ignored && !indexDone {
		m.failures[ps.index]++
		if failIndex {
			m.failIndex[ps.index] = true
		}
		if m.indexFails(ps.index) && !m.dup[ps.index] && !parseIndexes(deref(job.Status.FailedIndexes))[ps.index] {
			m.w.violate(InvRecordFirst, "%s lost its finalizer as failure %d of its index (backoffLimitPerIndex %d, FailIndex %v), but failedIndexes %q does not hold it",
				where, m.failures[ps.index], *spec.BackoffLimitPerIndex, m.failIndex[ps.index], deref(job.Status.FailedIndexes))
		}
	}
}

// indexFailedBefore says whether another pod of the index of ps has failed.
func (m *model) indexFailedBefore(ps *podState) bool {
	if m.failures[ps.index] > 0 {
		return true
	}
	for _, o := range m.order {
		if o != ps && o.index == ps.index && o.last != nil &&
			(o.last.Status.Phase == corev1.PodFailed || (o.last.DeletionTimestamp != nil && !isTerminal(o.last))) {
			return true
		}
	}
	return false
}

// indexFails says whether the model's failures fail index ix.
func (m *model) indexFails(ix int) bool {
	limit := m.job.Spec.BackoffLimitPerIndex
	return limit != nil && (m.failIndex[ix] || m.failures[ix] > int(*limit))
}

func (m *model) ledgerText(uid types.UID) string {
	switch {
	case m.inS[uid]:
		return "in uncounted succeeded"
	case m.inF[uid]:
		return "in uncounted failed"
	case m.counted[uid] != tracked:
		return "already counted as " + m.counted[uid].String()
	}
	return "never recorded"
}

func notCountedWhy(pod *corev1.Pod, ignored, validIndex, lateSuccess bool) string {
	switch {
	case !validIndex && ignored:
		return "no valid completion index, and an Ignore rule matches its failure"
	case !validIndex:
		return "no valid completion index"
	case lateSuccess:
		return "its index has failed"
	case ignored:
		return "an Ignore rule matches its failure"
	}
	return "it was stopped while running and the Job is not failing"
}
