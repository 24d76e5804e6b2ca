package telemetry

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// JobEventHandler returns the handler to add to the Job informer of the controller
// named managedBy (the spec.managedBy it answers to), for the two metrics the
// Reconciler does not report:
//
//   - jobs_by_external_controller_total{controller_name}: every Job added to the
//     informer (the initial list included, as upstream counts) that another
//     controller manages, labelled with its spec.managedBy, or
//     batchv1.JobControllerName when unset. Upstream, the built-in controller
//     counts the Jobs it leaves to others; here the Jobs left to the built-in
//     controller count too, since they are not this controller's.
//   - job_finished_indexes_total{status, backoffLimit}: for the Indexed Jobs this
//     controller manages, the indexes that an update adds to
//     status.completedIndexes (status "succeeded") and status.failedIndexes
//     ("failed"), read when the status write reaches the informer. Indexes that
//     leave the lists (an Indexed Job scaled down) are not subtracted: a counter
//     never goes backwards. Unparsable parts of a list are not counted.
//
// The handler never modifies the Jobs it is given.
func (m *Metrics) JobEventHandler(managedBy string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if job, ok := obj.(*batchv1.Job); ok {
				if c := controllerOf(job); c != managedBy {
					m.JobByExternalController(c)
				}
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*batchv1.Job)
			cur, ok2 := newObj.(*batchv1.Job)
			if ok1 && ok2 && controllerOf(cur) == managedBy {
				m.observeIndexes(old, cur)
			}
		},
	}
}

// controllerOf returns the name of the controller that manages job.
func controllerOf(job *batchv1.Job) string {
	return plan.JobWorkload(job).Controller()
}

// observeIndexes counts the indexes that cur's status lists and old's did not.
func (m *Metrics) observeIndexes(old, cur *batchv1.Job) {
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
