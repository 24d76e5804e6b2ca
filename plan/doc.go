// Package plan is the pure decision of one sync of a batch/v1 Job, or of any owner of
// pods described in Job terms (a Workload: identity, Spec, a batchv1.JobStatus; a
// custom resource's controller converts its object into one, JobWorkload presents a
// Job): given the owner, its pods, what the caller knows about work in flight and the
// time, Compute returns a Plan saying which pods to adopt, release, create and
// delete, whose tracking finalizers to remove, the status to write and when to look
// again. It performs no I/O, reads no clock and modifies none of its inputs (but
// Input.Facts, a cache of what it read of the pods), so a Plan can be compared with
// cmp.Diff in a test and printed in a log (Plan.String).
// The owner's kind and tracking finalizer are Input.Owner; condition reasons are the
// Job controller's whatever the kind, and messages are its words with the owner's
// kind where it says "Job" ("TrainingJob was active longer than specified
// deadline"; a batch/v1 Job's are upstream's exactly).
//
// One question of a sync is also asked on its own: Workload.IndexOutcomes returns the
// succeeded and failed indexes of an Indexed owner and its pods, by the rule Compute
// writes status.completedIndexes and status.failedIndexes with.
//
// The behaviour is that of the Job controller of Kubernetes 1.37, built from the
// primitive packages (indexes, backoff, finalizers, podfailurepolicy, successpolicy,
// podorder, jobstatus):
//
//   - pods are active (not terminal, not being deleted), terminating, ready, succeeded
//     or failed, where a pod being deleted before succeeding counts as failed unless
//     podReplacementPolicy is Failed; newly finished pods are those still carrying the
//     tracking finalizer and not yet in uncountedTerminatedPods;
//   - failure is decided in upstream's order: an existing FailureTarget, a FailJob
//     rule, failures beyond backoffLimit (Ignore matches excluded) or container
//     restarts under restartPolicy OnFailure, activeDeadlineSeconds, failed indexes
//     beyond maxFailedIndexes, all indexes finished with some failed; success by
//     successPolicy or completions; SuccessCriteriaMet is final;
//   - terminal conditions are two-step (FailureTarget or SuccessCriteriaMet first,
//     Failed or Complete once nothing is active, terminating or uncounted);
//   - the uncountedTerminatedPods ledger keeps each finished pod counted exactly once,
//     with at most 500 entries;
//   - creations and deletions (never both in one sync, at most 500 each), indexes by
//     first pending, backoff job-wide or per index, suspend and resume, elastic
//     Indexed Jobs, adoption and release, a Job being deleted.
//
// # Executing a plan
//
// The order matters for exactness across crashes; the Plan type documents it.
// Package reconcile implements it over a small client interface.
//
// # The status contract
//
// Compute reads Workload.Status and writes (Plan.RecordStatus, Plan.Status,
// Settled.Status) a batchv1.JobStatus: a Job's own status, or what a custom
// resource's controller converts its status to and from. Every field it writes must
// come back exactly at the next sync, each for its reason:
//
//   - uncountedTerminatedPods: the ledger of finished pods recorded before their
//     tracking finalizer goes (step 2 of the Plan). Lost after a finalizer went, those
//     pods are never counted; kept after they were counted, they count twice.
//   - succeeded and failed: the counters, which only grow; failed against
//     backoffLimit decides the failure. A counted pod no longer carries the
//     finalizer, so a lost count is lost for good.
//   - completedIndexes and failedIndexes (Indexed): which indexes are done. Lost,
//     finished indexes run again.
//   - conditions (type, status, reason, message, lastTransitionTime):
//     SuccessCriteriaMet and FailureTarget are a decision taken, kept even when the
//     pods that led to it are gone; Complete and Failed end the owner's syncs;
//     Suspended records a suspension. lastProbeTime may be dropped: nothing reads it.
//   - startTime: the active deadline counts from it. Lost, every sync starts the
//     clock again and writes.
//   - completionTime: written with Complete; nothing reads it, but it is the record.
//   - active, ready and terminating: recomputed from the pods at every sync and never
//     read, but compared with what was read: counts that do not come back make every
//     sync write the status again.
//
// Set and unset differ: ready, terminating, failedIndexes and
// uncountedTerminatedPods written set (to 0, "" or empty) must come back set, or
// every sync writes again. Times need survive only to the second, as JSON keeps
// them.
//
// A custom resource keeps in its own shape what it has a place for (conditions,
// often as metav1.Condition: jobstatus.MetaConditions and jobstatus.JobConditions
// convert them; the pod counts as worker counts; a phase derived from the
// conditions) and embeds Tracking for the rest. CheckStatusRoundTrip, in its tests,
// reports every field of the contract its conversion loses.
//
// # Counters
//
// status.succeeded counts pods that succeeded (Indexed: completed indexes).
// status.failed counts the failures that count toward backoffLimit, each pod once,
// when its tracking finalizer goes, as upstream:
//
//   - a pod in phase Failed, unless a pod failure policy rule with action Ignore
//     matches it;
//   - a pod deleted before it succeeded (by a user, a node drain, the garbage
//     collector), unless podReplacementPolicy is Failed, where it counts once its
//     phase is Failed;
//   - a pod still running when the owner fails (FailureTarget): the plan stops it
//     and counts it as failed, so an owner of three workers that fails by one
//     counts three failures.
//
// Not counted: pods stopped with their finalizer removed first (a scale-down, a
// suspension, strays of an Indexed owner), and pods still running when the owner
// succeeds by its success policy: they are stopped and their finalizer removed in
// the same sync.
//
// # Phases
//
// Compute is a chain of phases, each a function of what the earlier ones returned
// (one file each): claim (the Job's pods, adoption and release, each pod's facts and
// its class: the one pass over the listed pods, collecting what every later rule
// reads: the counts, the active and tracked pods, the ledger's members, the newly
// finished pods, the backoff record's finishes; no later phase walks every pod),
// classify (the totals; the backoff record), decide and
// decideIndexed (the verdict, the succeeded and failed indexes), manage (the
// deletions or creations), ledger (what is recorded in uncountedTerminatedPods and
// whose finalizers go) and assembleStatus (the statuses and Plan.Settlement). The
// active, ready and terminating counts are derived once from the pods and once from
// the plan's deletions and creations. Plan.Settle is a pure function of
// Plan.Settlement and the removals that succeeded.
//
// # Differences from upstream, on purpose
//
//   - An Indexed owner whose completed and failed indexes would push its object past
//     MaxObjectBytes fails with reason StatusTooLarge, its stored indexes kept;
//     upstream writes a status the API server refuses, again on every retry
//     (kubernetes #118085). Spec.WorstStatusSize says beforehand whether a spec can
//     get there.
//   - The caller names the controller (Input.ControllerName); there is no default, so
//     a controller built on jobkit never takes Jobs of the kube-controller-manager by
//     accident.
//   - The job-wide backoff record is merged with one rebuilt from the pods
//     (backoff.FromPods), so a restarted controller keeps backing off; upstream keeps
//     it in memory only. Pods being deleted without the tracking finalizer (mostly
//     pods this controller stopped: scale-down, suspend) are not failures there.
//   - A pod counts by its state when its tracking finalizer goes, which the
//     resourceVersion precondition of the removal patch of a pod not in phase
//     Succeeded or Failed makes exact (a finished pod stays finished, so its
//     removal needs none; reconcile sends none): a pod recorded
//     in uncountedTerminatedPods.failed (the Job was failing, or the pod was being
//     deleted) whose removal did not happen, and which has since succeeded or been
//     stopped with a failure an Ignore rule matches, is recorded again (as succeeded,
//     or not at all). Upstream, whose removal patch has no precondition, keeps it as
//     failed. The same holds when an elastic scale-down has since taken the pod's
//     index away (issue 25); a recorded failure of such an index that is still a
//     failure stays counted, as upstream (which lists a failed pod of an Indexed Job
//     only while its index is below completions, and counts a listed UID when its
//     finalizer goes).
//   - With backoffLimitPerIndex, an index is finished by its first outcome: when two
//     pods ran for one index (a creation hidden by a lost answer), a later failure of
//     a succeeded index or a later success of a failed one changes nothing (seen in
//     one sync, the success wins). Upstream lists such an index in both
//     completedIndexes and failedIndexes, which the API server refuses.
//   - The write that adds a terminal condition sets startTime when the Job has none
//     (it was suspended, which clears it): the API server requires one on a finished
//     Job. Upstream's write is refused and retried forever.
//   - Deletions of a suspended Job are capped like scale-down deletions
//     (MaxDeletesPerSync); upstream issues them all in one sync. (A finishing Job
//     deletes all its active pods at once, as upstream, because it counts them all.)
//   - A finishing Job's interim condition is written even when expectations are not
//     satisfied or some active pod cannot be deleted in this sync; upstream withholds
//     it until then. The terminal condition still waits for every pod to be gone,
//     every count to be settled and every planned finalizer removal to succeed.
//   - Per-index backoff requeues for the earliest waiting index even when other
//     indexes start now; upstream relies on the new pods' events.
//   - A finished Job's pods that still carry the finalizer get it removed here;
//     upstream leaves that to its orphan worker.
//   - While the job-wide backoff holds creations back, status.active keeps the real
//     number of active pods (upstream reported 0, kubernetes#139428).
//   - A pod's finalizer is removed by exactly one patch: a pod already listed in
//     RemoveFinalizers is never also deleted with a finalizer patch.
//   - Bad data is reported in Plan.Warnings, naming the field and the value, and the
//     valid part is used; upstream logs it.
//   - The pod of an index is named by the plan (indexes.PodName: the generateName
//     upstream uses and five characters derived from the Job's UID, the index and
//     the UIDs of that index's pods in the cache) instead of by the API server, so
//     that a creation sent again after a timeout is answered AlreadyExists and an
//     index never gets two pods. A name in Input.TakenPodNames (held by a pod the
//     Job released, which takes its UID out of the digest) is skipped for the next
//     of the index's sequence (indexes.NextPodName), the one reconcile walks too.
//   - While Input.ExpectationsSatisfied is false (pods created or deleted are not in
//     the cache yet), a status that changes only counts recomputed from the pods
//     (active, ready, terminating, and an Indexed Job's succeeded indexes) is not
//     written (StatusChanged false), and newly finished pods are recorded only when
//     the Job is finishing or being deleted or they fill the ledger: otherwise they
//     wait for the pods on the way, one batch instead of two, as many status writes
//     fewer. Upstream writes in every sync.
//   - status.succeeded of an Indexed Job that is not elastic never decreases, even
//     when the status lists succeeded indexes at or above completions (damaged
//     data, dropped): upstream lowers it and the API server refuses that write, and
//     every later one.
//
// # Cost
//
// Compute runs in O(n log n) for n pods (sorting pods for removal, building index
// sets) plus the length of the status strings, and allocates O(n): one 64-byte
// record of facts per pod, read in the one pass over the listed pods (claim); the
// later phases read those records and go back to a pod only when it finished with
// the tracking finalizer, is in the ledger, is created, deleted or matched against
// a pod failure policy. Allocations do not grow with the pods except for the pods a
// sync creates. It is safe for concurrent use: it shares nothing between calls but
// the FactCache of Input.Facts, which it locks (a Compute that finds it in use
// reads its pods without it).
//
// A FactCache given in Input.Facts keeps the pass's facts of each pod from one sync
// of an owner to the next, keyed by the pod's pointer (64 to 128 bytes a pod): a pod
// listed again is one probe of a hash table instead of the reads of its owner
// references, labels, annotations, finalizers and status. It is for pods nobody
// changes in place, such as an informer's (FactCache says the contract);
// reconcile.Config.ImmutablePods keeps one per owner.
//
// Time is memory latency, not arithmetic: a pod in an informer's cache is scattered
// among the other objects of the cache, so the pass over the pods is cache misses.
// BenchmarkCompute measures the pods allocated one after the other;
// BenchmarkComputeInformerLayout the same Jobs with every pod decoded from JSON once
// per event of it, in event order, among another Job's pods, events and log strings,
// and listed in a shuffled order as a cache lists them. The latest figures of both,
// the goal of issue 37 (at most 50 ms at 100,000 pods) and where the time goes are in
// docs/performance.md of the repository ("CPU").
package plan
