// Package group is the Kubernetes layer of the group rules of package
// plain/group (JobSet's world, jobset.x-k8s.io/v1alpha2: a workload of several
// roles whose child batch/v1 Jobs succeed, fail and restart together) and the
// pure plan of one sync of such a group.
//
// [ReadChild] reads one child Job into a plaingroup.Child: its role, index and
// restart attempts from JobSet's labels, its outcome from the Complete and
// Failed conditions (a child with FailureTarget or SuccessCriteriaMet alone
// still runs: its pods are terminating, and JobSet too waits for the terminal
// condition), its pod counts from status. [Compute] takes an [Input] (the
// group's identity, its spec in plain terms with one batchv1.JobTemplateSpec per
// role, its [Status], the child Jobs, whether the headless Service exists, the
// time) and returns a [Plan]: the children to create as complete Jobs, the
// children to delete (foreground) and why, those to suspend or resume, the
// Service to create, the new status, the events, when to look again, and
// whether the group's TTL has expired. The Plan type documents the order in
// which a caller executes it; reconcile.Reconciler.SyncChildJobs is the library's
// executor, through a [StatusWriter] for the group's status. Every rule is plaingroup's (failure policy,
// success policy, startup order and dependsOn, restarts, role statuses,
// conditions, TTL, suspension); this package converts and assembles, and
// decides nothing plaingroup already decides.
//
// # In-place restart
//
// Under restartStrategy InPlaceRestart, Compute reads Input.Pods (the pods
// labelled with the group's name): each pod's attempt (its
// jobset.sigs.k8s.io/in-place-restart-attempt annotation, written by the
// pod's agent) and its containers' restart counts, and moves
// Status.PreviousInPlaceRestartAttempt and CurrentInPlaceRestartAttempt with
// plaingroup.InPlaceAttempts.Next, or fails the group (ReachedMaxRestarts)
// and stops its children.
//
// # Defaults and validation
//
// [Input.Default] applies JobSet's webhook defaults (plaingroup.Default, the
// templates' completionMode Indexed and restartPolicy OnFailure, DNS hostnames
// and published not-ready addresses on); [Input.Validate] and
// [Input.ValidateUpdate] check a group on create and on update as JobSet's CRD
// schema and webhook do, returning apimachinery field errors with JobSet's
// paths and words: a webhook or a controller's conversion calls them. On
// update a role's template may not change, except its pods' labels,
// annotations, nodeSelector, tolerations and schedulingGates while the group
// is or becomes suspended, as JobSet allows for queues.
//
// # Children
//
// A child of role r and index i is the Job <group>-<r>-<i>, built from the role's
// template: JobSet's labels (plaingroup.Identity.Labels: group name and UID,
// role and its replicas, index, global and group indexes and replicas, restart
// attempts, job key, coordinator) on the Job and on its pod template, and as
// annotations too; the annotation alpha.jobset.sigs.k8s.io/namespaced-job
// (<namespace>_<name>); a controller reference to the group (controller and
// blockOwnerDeletion true); JobSet's webhook defaults for a template
// (completionMode Indexed, restartPolicy OnFailure) where the template leaves
// them out; with DNS hostnames (the default) the pod subdomain, so each pod of
// an Indexed child is <child>-<completion index>.<subdomain>, the hostname the
// Job controller gives it; spec.managedBy when Input.ChildManagedBy is set;
// and spec.suspend equal to the group's (a suspended group creates the
// children of the roles that may start, suspended, and resumes them in the
// startup order, writing into each the role's pod template labels,
// annotations, nodeSelector, tolerations and scheduling gates changed while it
// was suspended, merged into the child's, as JobSet does). No environment
// variable is added:
// JobSet adds none (the Job controller sets JOB_COMPLETION_INDEX, and the
// labels reach a pod through the downward API).
//
// With Input.ControllerName set, a group whose spec.managedBy names another
// controller is skipped (unset means JobSet's own controller, as for JobSet).
// A Job is the group's when its controller reference names Input.Owner's kind
// with the group's UID. Other Jobs among Input.Children, and the group's Jobs
// whose labels cannot be read (ReadChild's errors), are left out of every rule
// and listed in Plan.Warnings with the field and value; their names stay taken,
// so no child is planned over them.
//
// # Reasons
//
// Deletions: "obsolete: restart attempt ..." (a child of an old group attempt)
// or "obsolete: job restart attempt ..." (a child restarted alone), "the group
// failed (<reason>)", "the group completed (AllJobsCompleted): success stops the
// rest". Creations name the index, role and attempts. The group is deleted when
// ttlSecondsAfterFinished has expired (DeleteGroup), and looked at again when it
// will (RequeueAfter). Events carry plaingroup's reasons: the Failed reasons
// (Warning), the restart actions "<action>FailurePolicyAction" (Warning),
// AllJobsCompleted, SuspendedJobs and ResumeJobs (Normal).
//
// # Invariants
//
// Compute is pure: no clock (Input.Now), no I/O, no input modified (templates
// are deep-copied into each new child). Status is written before any child is
// deleted (see Plan), so a restart is counted once across crashes. A child
// of the current attempt is never deleted for being obsolete, and no name is
// planned for creation while any Job holds it (plaingroup.Creations).
//
// # Cost
//
// Compute is O(roles + rules × children + created children) and allocates the
// facts of the children, the plan and, per created child, a deep copy of its
// template. BenchmarkCompute (bench_test.go: a leader and workers of eight pods,
// three failure policy rules) on a shared two-core machine under heavy load,
// so the times are upper bounds; allocations are exact:
//
//	children  first sync (all created)   steady sync (nothing to do)  restart (all deleted)
//	      10  0.4 ms,   64 KB,    385     31 µs,   5 KB,  37         37 µs,   8 KB,    61
//	     100  2.9 ms,  590 KB,  3,562     94 µs,  19 KB,  37        260 µs,  38 KB,   157
//	   1,000   22 ms,  5.9 MB, 39,513    0.6 ms, 144 KB,  37        0.8 ms, 308 KB, 1,064
//
// A created child costs about 6 KB and 39 allocations (its labels and
// annotations, four maps, and the template's deep copy); a steady sync
// allocates the same at every size besides the facts of the children.
// ReadChild allocates nothing.
//
// # Concurrency
//
// Compute and ReadChild share nothing between calls and are safe for concurrent
// use.
//
// # Differences from JobSet
//
//   - The status is written before the children of an old attempt are deleted,
//     so a crash between the two cannot lose or repeat a restart.
//   - When the group finishes in a sync and its TTL has already run out (a TTL
//     of 0), the terminal status is written first and the group deleted at the
//     next sync, at once (RequeueAfter of one nanosecond).
//   - plaingroup's differences hold (its package doc).
//   - Exclusive placement without JobSet's pod webhook: every pod of a child
//     carries the pod affinity to its child's job-key and the anti-affinity
//     to any other child's (JobSet puts them on the leader pod and gives the
//     followers the leader's domain as a node selector; it also labels pods
//     with their priority, which only admission knows); the node-selector
//     strategy is JobSet's. docs/jobset.md says what this costs the
//     scheduler.
//   - A PodDisruptionBudget per group (Input.DisruptionBudget) is jobkit's:
//     JobSet has none.
//   - The pods of a child beyond its role's replicas still report their
//     in-place restart attempts until they are gone.
//   - Of in-place restarts, Compute keeps the barrier
//     (status.previousInPlaceRestartAttempt and currentInPlaceRestartAttempt,
//     from the attempts Input.Pods report through
//     plaingroup.AnnotationInPlaceRestartAttempt) and fails the group with
//     ReachedMaxRestarts, as JobSet's controller does; a failed child is
//     recreated as under Recreate, as in JobSet. Restarting the containers
//     and holding each worker at the barrier is the agent's part (JobSet's
//     in-place restart agent, run in each pod): jobkit provides none.
//     controllerruntime fills Input.Pods with Options.InPlaceRestart, and
//     the test rig's Store does for every such group (a test plays the agents:
//     reconciletest's TestStoreInPlaceRestart).
package childjobs
