package reconcile

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The events of batch/v1 Jobs, and the Jobs that may adopt an orphan.

// MatchingJobs returns the Jobs of jobs, in order, that are in pod's namespace, are
// not being deleted, and whose selector matches pod's labels: the candidates to adopt
// an orphan. Jobs without a selector, or with an invalid or empty one, match nothing.
// Cost: O(len(jobs) × selector size).
func MatchingJobs(pod *corev1.Pod, jobs []*batchv1.Job) []*batchv1.Job {
	if pod == nil {
		return nil
	}
	var out []*batchv1.Job
	set := labels.Set(pod.Labels)
	for _, job := range jobs {
		if job == nil || job.Namespace != pod.Namespace || job.DeletionTimestamp != nil || job.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		if sel.Matches(set) {
			out = append(out, job)
		}
	}
	return out
}

// JobEventType is the kind of an informer event about a Job.
type JobEventType int

// Job event types.
const (
	JobAdded JobEventType = iota + 1
	JobUpdated
	JobDeleted
)

// JobEvent is an informer event about a Job; the fields mean what they mean in
// PodEvent.
type JobEvent struct {
	Type JobEventType
	Old  *batchv1.Job
	New  *batchv1.Job
}

// JobEventMapping is what a Job event means for the Job controller.
type JobEventMapping struct {
	// Key is the Job's key; empty when the event carries no Job.
	Key string
	// Sync asks for a sync of Key after Delay: added Jobs and spec changes
	// (generation changed) sync at once, status or metadata changes after the batch
	// period.
	Sync  bool
	Delay time.Duration
	// Forget asks to drop the Job's state (Reconciler.Forget): it was deleted, or
	// recreated with a new UID.
	Forget bool
	// OrphanCleanup asks to queue the pods of the old Job (its selector) for the
	// orphan cleanup: the Job was deleted, replaced, or has just finished.
	OrphanCleanup bool
}

// MapJobEvent maps a Job event, as upstream's Job event handlers do. The active
// deadline needs no timer here: the sync that follows a spec change requeues itself
// for the deadline (Result.RequeueAfter).
func MapJobEvent(ev JobEvent, batchPeriod time.Duration) JobEventMapping {
	var m JobEventMapping
	switch ev.Type {
	case JobAdded:
		if ev.New == nil {
			return m
		}
		m.Key, m.Sync = Key(ev.New.Namespace, ev.New.Name), true
	case JobUpdated:
		cur, old := ev.New, ev.Old
		if cur == nil {
			return m
		}
		m.Key, m.Sync = Key(cur.Namespace, cur.Name), true
		if old == nil {
			return m
		}
		if old.UID != cur.UID {
			m.Forget, m.OrphanCleanup = true, true
			return m
		}
		if old.Generation == cur.Generation {
			m.Delay = batchPeriod
		}
		m.OrphanCleanup = !jobFinished(&old.Status) && jobFinished(&cur.Status)
	case JobDeleted:
		job := ev.Old
		if job == nil {
			job = ev.New
		}
		if job == nil {
			return m
		}
		m.Key, m.Forget, m.OrphanCleanup = Key(job.Namespace, job.Name), true, true
	}
	return m
}

// ObserveJobEvent maps a Job event (MapJobEvent with the configured batch period) and
// forgets the Job's state when the mapping says so: the state of the deleted or
// replaced Job only, by UID, so that a late event never wipes the state of a Job
// recreated under the same name and already synced.
func (r *Reconciler) ObserveJobEvent(ev JobEvent) JobEventMapping {
	m := MapJobEvent(ev, r.cfg.PodEventBatchPeriod)
	if m.Forget {
		gone := ev.Old
		if gone == nil {
			gone = ev.New
		}
		r.forgetUID(m.Key, gone.UID)
	}
	return m
}
