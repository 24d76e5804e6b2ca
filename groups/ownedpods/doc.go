// Package roles runs an owner of several roles whose pods it owns directly, with
// no child Jobs: a TrainingJob with a launcher and workers, an MPI job, a head and
// workers. Each role's pods run through package plan as one Job's would
// (expectations, tracking finalizer, uncounted ledger, backoff, indexes, pod
// failure policy), and the group rules of package plain/group (failure policy
// across roles, restarts of the whole group, success over target roles, startup
// order and dependsOn) decide the owner's state. Compute is the pure decision of
// one sync; reconcile.Reconciler executes it with one status write per sync at
// most.
//
// # What Compute does
//
// Each role is one virtual Job named <owner>-<role>: plan.Compute runs over the
// role's pods of its current attempt with the role's Spec, its pod template
// given the labels jobset-name=<owner>, replicatedjob-name=<role> and
// restart-attempt=<attempt> (plain/group's keys) and, in every container and init
// container that does not declare them, JOBKIT_ROLE and JOBKIT_RESTART_ATTEMPT.
// The role plan gets no backoff record (plan.Input.Backoff is zero): plan
// rebuilds it from the pods, so nothing but the status is kept between syncs.
// The group rules then read one plaingroup.Child per role (its Job status's
// Complete or Failed condition, its pod counts) with Replicas 1:
//
//   - failure first (plaingroup.Matcher.Decide): fail the group, or restart it
//     (status.restarts grows, RestartingJobSet=True);
//   - then success (plaingroup.Succeed): Completed=True, terminal state Completed;
//   - while the group runs, the startup order and dependsOn (plaingroup.MayStart):
//     a role not allowed yet is planned suspended, so none of its pods is
//     created; a role that has started (its status has a start time, or it has
//     pods) stays allowed, as JobSet gates only the creation of a child;
//   - suspension (Workload.Suspend): every role is planned suspended, and the
//     group's Suspended condition says so.
//
// The group decides over the statuses the roles' plans are about to write, so a
// role's failure or success and the group's answer to it are one write; a role
// whose mode the answer changes (it must stop now, or may start now) is planned
// again in the same sync.
//
// A pod that carries no known role, no attempt, or another attempt than its
// role's is a stray: deleted with its finalizer removed first, never counted,
// with a warning naming the pod and the label value.
//
// # Stopping and restarts
//
// A role stops when the group has finished (its remaining pods are stopped,
// not counted as failures, as a Job's success policy stops the rest) or when
// its attempt is below status.restarts. Stopping is planning it as an owner
// being deleted, which records every finished pod through the ledger before its
// finalizer goes (a failed pod of an Indexed role with backoffLimitPerIndex too,
// which a running role keeps until its replacement exists: a stopped role never
// creates one), and deleting its pods that still run with the finalizer removed
// first (not counted): the status that stops them counts them terminating, no
// longer active or ready, as plan counts its own deletions. Once a restarting
// role's finished pods are counted they
// are deleted too. When nothing of the old attempt is left (no pod of it listed,
// nothing uncounted, no removal or deletion planned, expectations satisfied),
// the role advances in this sync's status: Attempt = status.restarts and an
// empty Job status; the pods of the new attempt are created by the next sync,
// from that status. With BlockingRecreate no role advances until every
// restarting role can; with Recreate each advances on its own. Nothing of the
// old attempt is counted after the advance: its pods are strays from then on.
//
// A role that fails on its own (its Job's Failed condition: a pod failure
// policy's FailJob, a backoff limit, maxFailedIndexes) has already stopped its
// other active pods as a failed Job does, and counts them failed (a failed Job
// counts its terminating pods), in its Failed total too; the other roles the
// group then stops are not counted.
//
// # In-place restart
//
// Under failurePolicy.restartStrategy InPlaceRestart (JobSet's KEP-467) an
// agent in each pod reports the attempt its pod is on, in the annotation
// jobset.sigs.k8s.io/in-place-restart-attempt, restarts its pod's containers
// when the group's previous attempt reaches its own, and holds its worker
// until the group's current attempt does. Compute moves Status.InPlace
// (JobSet's previousInPlaceRestartAttempt and currentInPlaceRestartAttempt)
// by plaingroup.InPlaceAttempts.Next over the roles' pods of their current
// attempt, in the status write of the sync, and fails the group with
// ReachedMaxRestarts as JobSet does. The roles follow the strategy's template
// rules (no backoff limit, podReplacementPolicy Failed, completions equal to
// parallelism), so a role never fails on its own: a pod that fails as a whole
// (its node lost, its agent gone) is replaced alone, by the role's plan, in
// the group's attempt, and its replacement's agent reports the next attempt,
// which restarts the others in place. No pod is deleted for a restart and
// Status.Restarts does not grow; it grows only when a failure policy rule
// restarts the group on a role's Failed condition, and that restart recreates
// the pods as under Recreate.
//
// Owning the pods removes the Job controller between a failed pod and the
// group (one sync sees the failure, replaces the pod and moves the barrier,
// in one status write). It does not remove the agent: no API call restarts a
// running container, so the restart of a healthy pod is a container exiting
// with the code of a kubelet restart rule, and the barrier is a process in
// the pod waiting for the group's status.
//
// # The one-write protocol
//
// The status a Plan carries holds, for each role, the role plan's status after
// Settle with no removal (plan.Plan.Settle(nil)): the new ledger entries, and
// counted only the pods that no longer carry the tracking finalizer (or whose
// removal is pending). It is safe to write before any finalizer removal, and
// one write per sync does it all. The cost: a pod is counted one sync after its
// finalizer goes, and a role's terminal condition comes in the write after its
// last removal (the write that removes nothing). A crash between the write and
// the removals loses nothing and counts nothing twice: the ledger holds what
// the next sync counts. While expectations are unsatisfied, a role status that
// would change only in pod counts is kept as it was (as plan does).
//
// # The status contract
//
// Status must come back exactly as written at the next sync: restarts and
// restartsCountTowardsMax (the attempt every pod carries, and the restart
// budget), the conditions (Completed and Failed end the group; their
// lastTransitionTime is kept), terminalState, and per role its name, attempt,
// its Job status under plan's contract (the ledger above all: lost, pods are
// never counted) and the totals. Entries are matched to roles by name; a
// missing entry starts at zero, an entry of no role is dropped with a warning.
// RoleStatus.Succeeded and Failed are the totals over attempts: the old total
// plus what the role's Job counters grew by, so they never decrease and do not
// change when an attempt starts afresh. RoleStatus.FailedOnTheirOwn is the
// total of the pods that failed by themselves (in phase Failed, not being
// deleted) as they enter the role's ledger of failures: a pod enters it once,
// so it is counted once, and the pods a failing role stops (which Failed
// counts, as a Job's) are not among them.
//
// # Skipped owners
//
// Compute skips an owner whose ManagedBy names another controller, and one that
// has finished when no pod runs or carries the tracking finalizer, no role
// status holds an uncounted pod, and every role status shows what is left of
// its pods (none active or ready, as many terminating as are being deleted).
// The write that finishes the group stops the roles still running and their
// pods go after it: one more write shows them gone, or a finished owner's
// status would say they run forever.
//
// # Differences from JobSet
//
//   - No child Jobs: a role is one child, run through plan in this process;
//     a role's pods are named <owner>-<role>-<index>-<suffix> (Indexed) or
//     <owner>-<role>-<suffix>, with the hostname <owner>-<role>-<index>, and
//     carry the group, role and attempt labels but not JobSet's other keys
//     (job-index, global indexes, job key).
//   - RestartJob and RestartJobAndIgnoreMaxRestarts are refused by validation:
//     with one child per role, restarting one child is restarting a role's
//     whole attempt, which the group's restart already does.
//   - The role and attempt are also in the environment, under names of ours
//     (JOBKIT_ROLE, JOBKIT_RESTART_ATTEMPT).
//   - A role's own Suspended and Resumed events are dropped: waiting, stopping
//     and the owner's suspension are machinery, and the group's Suspended
//     condition and its events report the owner's suspension. The role's Job
//     status still shows plan's Suspended condition while it waits or stops
//     (plan reads it back).
//   - The caps of plan.Options (creations, deletions, ledger entries per sync)
//     apply to each role, so a sync may create up to one cap per role.
//   - No headless Service, coordinator or TTL: the caller's controller owns
//     those.
//
// # Cost
//
// Compute costs plan.Compute over each role's pods (once more for a role whose
// mode the group's decision changes in this sync) plus O(roles + pods);
// bench_test.go measures 1 launcher with 64 and with 1,000 workers.
//
// # Concurrency
//
// Compute is pure: it shares nothing between calls, modifies none of its
// inputs, and is safe for concurrent use.
package ownedpods
