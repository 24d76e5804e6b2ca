// Package controller is a single-pod job controller on controller-runtime: it
// reconciles RunJobs (examples.jobkit.dev/v1alpha1) the way Prow's plank
// reconciles ProwJobs. It is a thin executor of runplan.Compute, which holds
// every decision: each sync reads the run, its pod and the runs of its
// namespace from the cache, maps them onto runplan.Input (runOf), and executes
// the runplan.Plan in the order documented on it:
//
//   - the plan's status writes (start time, superseded runs, pending, revival,
//     final state, completion), each followed by a wait until the cache shows
//     it (reconcile.WaitForCacheSync), so that the next decision never counts a
//     started run as still waiting;
//   - the pod effects: create the pod (a failed create goes through
//     Plan.CreateFailed), release Config.ReporterFinalizers, delete it with its
//     UID as precondition;
//   - the requeue.
//
// What is left here is mechanics, not decisions: a plain/concurrency KeyedMutex per
// namespace, job name and queue held around "compute, create the pod, record
// pending" for a run that may start, so that two workers never take the same
// slot; retrying a status write that lost an optimistic-concurrency race; and
// waking up the runs a finished run was holding back.
//
// # Life of a RunJob
//
//	""/triggered ──(limits allow, pod created)──► pending ──► success | failure | error | aborted
//	      │                                          │
//	      └──── aborted (by a user, or by a newer ◄──┘ (a newer run with the same
//	            run with the same dedupeKey)            jobName and dedupeKey)
//
// A run whose status.state is set to a final state without a completionTime (by
// a user aborting it through the status subresource, by the deduplication, or by
// this controller on a timeout) has its pod deleted and then its completionTime
// set. A run with a completionTime is never reconciled again.
//
// The pod has the run's name, its namespace, a controller reference to the run,
// and the label LabelRunUID; the manager's cache (CacheOptions) only holds such
// pods.
//
// # Differences from plank
//
// The differences of the decisions are runplan's (see its package doc). Those
// of the execution:
//
//   - When MaxPending is set, starts take a per-namespace lock as well, so two
//     workers cannot both take the last global slot (plank has no such lock).
//   - A run that leaves the triggered or pending state wakes up the waiting
//     runs it was holding back, instead of leaving them to their 10s retry.
//
// # Concurrency
//
// A Reconciler is safe for concurrent use by the controller's workers;
// controller-runtime never reconciles the same RunJob in two workers at once.
package controller
