package metrics

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// EventHandler returns the handler to add to the owner informer of the controller
// named controller (the spec.managedBy it answers to) for the two metrics the
// Reconciler does not report; workload converts an informer's object of kind onto
// its workload, false skipping it (an object of another type, or one that does
// not convert):
//
//   - jobs_by_external_controller_total{controller_name}: every owner added to the
//     informer (the initial list included, as upstream counts) that another
//     controller handles (plan.Workload.HandledBy), labelled with its
//     spec.managedBy, or batchv1.JobControllerName for a Job where it is unset.
//     Upstream, the built-in controller counts the Jobs it leaves to others; here
//     the Jobs left to the built-in controller count too, since they are not this
//     controller's.
//   - job_finished_indexes_total{status, backoffLimit}: for the Indexed owners this
//     controller handles, the indexes that an update adds to
//     status.completedIndexes (status "succeeded") and status.failedIndexes
//     ("failed"), read when the status write reaches the informer. Indexes that
//     leave the lists (a scale-down) are not subtracted: a counter never goes
//     backwards. Unparsable parts of a list are not counted.
//
// The handler never modifies the objects it is given.
func (m *Metrics) EventHandler(controller string, kind owner.Kind, workload func(obj any) (*plan.Workload, bool)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if w, ok := workload(obj); ok && !w.HandledBy(controller, kind) {
				m.JobByExternalController(w.Controller())
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := workload(oldObj)
			cur, ok2 := workload(newObj)
			if ok1 && ok2 && cur.HandledBy(controller, kind) {
				m.observeIndexes(old, cur)
			}
		},
	}
}

// JobEventHandler is the EventHandler of a batch/v1 Job informer.
func (m *Metrics) JobEventHandler(controller string) cache.ResourceEventHandler {
	return m.EventHandler(controller, owner.BatchJob, func(obj any) (*plan.Workload, bool) {
		job, ok := obj.(*batchv1.Job)
		if !ok {
			return nil, false
		}
		return plan.JobWorkload(job), true
	})
}

// observeIndexes counts the indexes that cur's status lists and old's did not.
func (m *Metrics) observeIndexes(old, cur *plan.Workload) {
	if ptr.Deref(cur.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return
	}
	limit := BackoffLimitGlobal
	if cur.Spec.BackoffLimitPerIndex != nil {
		limit = BackoffLimitPerIndex
	}
	m.FinishedIndexes(StatusSucceeded, limit,
		indexCount(cur.Status.CompletedIndexes)-indexCount(old.Status.CompletedIndexes))
	m.FinishedIndexes(StatusFailed, limit,
		indexCount(ptr.Deref(cur.Status.FailedIndexes, ""))-indexCount(ptr.Deref(old.Status.FailedIndexes, "")))
}

// indexCount is the number of indexes in the valid parts of an index list.
func indexCount(list string) int {
	ivs, _ := plainindexes.Parse(list, plainindexes.NoLimit) // the valid parts are kept
	return ivs.Count()
}
