package sim

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// checkCalls looks at the calls of the last sync: no status write may be refused
// as invalid, and no index may have its creation refused with AlreadyExists in
// lateSyncs syncs while it holds no live pod of the owner.
func (w *world) checkCalls() {
	calls := w.cluster.Calls()
	refused := map[int]string{}
	for _, call := range calls {
		if (call.Op == reconciletest.OpUpdateJobStatus || call.Op == reconciletest.OpUpdateStatus) && apierrors.IsInvalid(call.Err) {
			w.violate(InvInvalidStatus, "the API server refused a status write: %v", call.Err)
		}
		if call.Op == reconciletest.OpCreatePod && apierrors.IsAlreadyExists(call.Err) && call.Pod != nil {
			if i := podIndex(call.Pod); i >= 0 {
				refused[i] = call.Pod.Name
			}
		}
	}
	w.cluster.ResetCalls()
	for i := range w.refused {
		if w.model.hasLivePod(i) {
			delete(w.refused, i)
		}
	}
	for i, name := range refused {
		if w.model.hasLivePod(i) {
			continue
		}
		w.refused[i]++
		if w.refused[i] >= lateSyncs && !w.stopped {
			w.violate(InvLateReplacement, "index %d has no live pod and its creation (as %s) was refused with AlreadyExists in %d syncs", i, name, w.refused[i])
		}
	}
}

// checkStep checks the invariants that hold between steps.
func (w *world) checkStep() {
	if w.stopped {
		return
	}
	m := w.model
	m.checkQuiet()
	if w.stopped || m.job == nil || m.deleted || w.clean < cleanSyncs || w.finished() {
		return
	}
	active, dup := m.activeCount()
	limit := int(deref32(m.job.Spec.Parallelism, 1))
	if m.job.Spec.Suspend != nil && *m.job.Spec.Suspend {
		limit = 0
	}
	if m.job.Spec.Completions == nil && m.anySucceeded() {
		// A work queue that has seen a success leaves what runs running: a
		// lower parallelism deletes nothing (as upstream).
		limit = max(limit, active)
	}
	if dup >= 0 {
		w.violate(InvDuplicateIndex, "index %d has two active pods %d syncs after the last fault that could hide them", dup, w.clean)
	} else if active > limit {
		w.violate(InvOverParallelism, "%d active pods, parallelism %d, %d syncs after the last fault that could hide them", active, limit, w.clean)
	}
}

// finished says whether the Job has a terminal condition and no pod carries the
// tracking finalizer; for a deleted owner, whether its pods are all gone.
func (w *world) finished() bool {
	j := w.model.job
	if w.model.deleted {
		for _, ps := range w.model.order {
			if !ps.gone && !ps.released {
				return false
			}
		}
		return true
	}
	if j == nil || !(condTrue(j, batchv1.JobComplete) || condTrue(j, batchv1.JobFailed)) {
		return false
	}
	for _, ps := range w.model.order {
		if ps.finalizer && !ps.gone {
			return false
		}
	}
	return true
}

// checkEnd checks the state at the end of a run.
func (w *world) checkEnd() {
	if w.stopped {
		return
	}
	m := w.model
	j := m.job
	if m.deleted {
		w.checkEndDeleted()
		return
	}
	if !(condTrue(j, batchv1.JobComplete) || condTrue(j, batchv1.JobFailed)) {
		w.violate(InvNotFinished, "the Job has no terminal condition after %d syncs: %s", w.syncs, statusText(&j.Status))
		return
	}
	for _, ps := range m.order {
		if ps.finalizer && !ps.gone {
			w.violate(InvFinalizerLeft, "pod #%d %s (%s) still carries the tracking finalizer after the Job finished", ps.ordinal, ps.name, describePod(ps.last))
			return
		}
	}
	if u := j.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		w.violate(InvUncountedLeft, "the finished Job still has uncounted pods: %v", u)
		return
	}
	m.checkQuiet()
}

// checkEndDeleted checks the end of a run whose owner was deleted: the garbage
// collector and the orphan cleanup have removed every pod of the owner, and no pod
// in the cluster still carries the owner's tracking finalizer.
func (w *world) checkEndDeleted() {
	for _, p := range w.cluster.ListPods(w.ns) {
		if w.model.hasFinalizer(p) && ownedBy(p, w.model.uid) {
			w.violate(InvFinalizerLeft, "pod %s (%s) of the deleted %v still carries the tracking finalizer", p.Name, describePod(p), w.kind)
			return
		}
	}
	for _, ps := range w.model.order {
		if !ps.gone && !ps.released {
			w.violate(InvNotFinished, "pod #%d %s (%s) of the deleted %v is still there after %d syncs", ps.ordinal, ps.name, describePod(ps.last), w.kind, w.syncs)
			return
		}
	}
}

func statusText(st *batchv1.JobStatus) string {
	s := fmt.Sprintf("active=%d succeeded=%d failed=%d", st.Active, st.Succeeded, st.Failed)
	if st.CompletedIndexes != "" {
		s += fmt.Sprintf(" completedIndexes=%q", st.CompletedIndexes)
	}
	if st.FailedIndexes != nil {
		s += fmt.Sprintf(" failedIndexes=%q", *st.FailedIndexes)
	}
	for _, c := range st.Conditions {
		s += fmt.Sprintf(" %s=%s(%s)", c.Type, c.Status, c.Reason)
	}
	return s
}
