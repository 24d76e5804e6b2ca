// Package controller is a single-pod job controller on controller-runtime: it
// reconciles RunJobs (examples.jobkit.dev/v1alpha1) the way Prow's plank
// reconciles ProwJobs, built from jobkit's pure packages:
//
//   - concurrency.Decide starts a triggered run only when the global cap on
//     pending runs, its job's maxConcurrency and its queue's capacity allow it,
//     oldest first; a concurrency.KeyedMutex per namespace, job name and queue
//     makes "decide, create the pod, record pending" atomic across workers.
//   - deadlines and podoutcome judge the pod: success (checked container by
//     container), failure, false success, OOM kill, eviction, node lost, the
//     unscheduled/pending/running timeouts; the controller takes the step.
//   - reconcile.ClassifyCreateError ends a run whose pod the API server refuses
//     (4xx) and retries the rest; reconcile.WaitForCacheSync waits, after every
//     state change, until the cache shows it, so that the next decision does not
//     count a started run as still waiting.
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
//   - The revival count is written to the run's status before the pod is deleted
//     (plank only raises it in memory, so its max revivals never takes effect),
//     together with the UID of the pod it counted.
//   - Timeouts use an injected clock and running pods are requeued when their
//     timeout would expire.
//   - A timed-out pod is deleted after the final state is recorded, not before,
//     so that a failed status write cannot make the next sync recreate it.
//   - Deduplication keys on jobName and an explicit dedupeKey instead of plank's
//     refs digest, orders runs by creation time (then UID) instead of
//     status.startTime, and aborts as soon as the newer run is seen.
//   - When MaxPending is set, starts take a per-namespace lock as well, so two
//     workers cannot both take the last global slot (plank has no such lock).
//   - A run that leaves the triggered or pending state wakes up the waiting
//     runs it was holding back, instead of leaving them to their 10s retry.
//   - An unknown queue keeps the run triggered with a description naming the
//     queue and retries after Config.RetryAfter (plank returns an error).
//
// # Concurrency
//
// A Reconciler is safe for concurrent use by the controller's workers;
// controller-runtime never reconciles the same RunJob in two workers at once.
package controller
