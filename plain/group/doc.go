// Package group holds the rules of a group of roles, the world of JobSet
// (jobset.x-k8s.io/v1alpha2): a workload of several replicated jobs (a leader and
// workers, a launcher and ranks) whose child jobs succeed, fail and restart
// together. It works over plain values with the standard library only, so a
// scheduler with no Kubernetes object uses the same rules as a controller.
// Package github.com/jobkit/jobkit/group is its Kubernetes layer: it reads child
// batch/v1 Jobs into these facts and plans one sync of a group with these rules.
//
// # The facts
//
// A group is its [Role] list (name, group name, replicas, the child's parallelism
// and completions, dependsOn), its [Child] list (role, index, restart attempts,
// outcome with the reason, message and time of the finishing condition, pod
// counts, suspended, being deleted) and its [Counters] (status.restarts,
// restartsCountTowardsMax and the per-index jobRestarts of each role). A child
// belongs to the current attempt when its restart-attempt is not below
// status.restarts and its job-restart-attempt is not below its index's
// jobRestarts ([Counters.Current]); every rule reads current children only.
//
// # The rules
//
//   - Failure: [Compile] reads a [FailurePolicy]; [Matcher.Decide] finds the rule
//     and the earliest-failed child it matches, applies the action and returns a
//     [Decision]: fail, restart the group or restart one child, the new counters,
//     the condition (Failed or RestartingJobSet, with JobSet's reasons and
//     messages), the terminal state and an event.
//   - Success: [Succeed] applies a [SuccessPolicy] (All or Any over target roles).
//   - Startup: [MayStart] says which roles may be created or resumed (InOrder, or
//     dependsOn Ready / Complete) and gives the InOrder conditions.
//   - Restart: [Obsolete] lists the children of old attempts that must go;
//     [Creations] lists the children to create under Recreate or
//     BlockingRecreate; [Identities] and [Identity.Labels] give their names and
//     labels (global and group indexes and replicas, attempts, job key);
//     [Coordinator.Value] the coordinator label.
//   - Status: [Statuses] counts ready, succeeded, failed, active and suspended
//     children per role; [SetCondition] upserts a condition as JobSet does;
//     [RestartEnded] gives the RestartingJobSet=False that ends a restart.
//   - Lifecycle: [TTL] (time left after finishing, expired) and [Suspend]
//     (children to suspend or resume).
//   - In-place restart: [PodAttempt.Attempt] is the attempt a pod reports
//     ([AnnotationInPlaceRestartAttempt]); [InPlaceAttempts.Next] moves the
//     group's previous and current attempts (the barrier) and fails the group
//     with ReachedMaxRestarts when a container restarts, or an attempt goes,
//     beyond maxRestarts; unlike JobSet, a pod that has succeeded, or is
//     leaving the group's size, holds no barrier ([PodAttempt.Succeeded],
//     [PodAttempt.Leaving]).
//   - Elastic groups: [Spec.Surplus] lists the children beyond a role's
//     replicas (a role scaled down), highest index first, to delete and
//     leave out of the other rules; [Spec.Resized] lists the running
//     children of an Indexed role whose parallelism = completions changed.
//   - Volume claims: a [VolumeClaim] of spec.volumeClaimPolicies is named
//     <claim>-<group> ([VolumeClaim.ClaimName]), owned by the group unless
//     retained ([VolumeClaim.Owned]), and mounted by the roles [Spec.Claims]
//     gives.
//   - Exclusive placement: [Spec.Exclusive] resolves JobSet's
//     exclusive-topology and node-selector annotations of the group and of a
//     role.
//   - Validation: [Validate] returns every fielderr.Error of a [Spec], naming the
//     field (JobSet's path under spec) and value, as JobSet's schema and
//     webhook would, in JobSet's words where its webhook words a message itself
//     and in k8s.io/apimachinery's where it passes a helper's on (DNS names,
//     label values, domain-prefixed paths); [ValidateUpdate] adds the immutable
//     fields of an update; [Default] fills JobSet's defaults.
//
// A sync of a group applies them in JobSet's order: delete the obsolete children;
// decide failure (which comes before success); then success; then startup and
// creations; then status and conditions.
//
// # Reasons
//
// The conditions and events carry JobSet's reasons and messages; the messages
// that name the group or a child ("jobset completed successfully", "first
// failed job: x") are worded by a [Terms] value, whose zero value is JobSet's
// words (the package functions use it), so that another shape of group words
// them its own way (an owner that runs its roles' pods itself: "TrainingJob
// completed successfully", "first failed role: worker"). Failed=True:
// FailedJobs (no failure policy), FailJobSetFailurePolicyAction (a FailJobSet
// rule), ReachedMaxRestarts (the restart budget is spent). RestartingJobSet=True:
// DefaultFailurePolicy (no rule matched) or FailurePolicy_<rule name>; it ends
// with RestartingJobSet=False: JobsReady, JobSetFailed, JobSetCompleted or
// JobSetSuspended. Completed=True: AllJobsCompleted. Suspended: SuspendedJobs
// (True) and ResumeJobs (False). StartupPolicyInProgress and
// StartupPolicyCompleted: InOrderStartupPolicyInProgress and
// InOrderStartupPolicyCompleted. An event's reason is the Failed condition's
// reason, or "<action>FailurePolicyAction" for a restart. The reasons are not
// exported: [Decision.Effect] and [Decision.Action] tell the outcomes apart.
//
// # Labels
//
// [Identity.Labels] writes JobSet's keys under jobset.sigs.k8s.io/: jobset-name,
// jobset-uid, replicatedjob-name, replicatedjob-replicas, job-index,
// job-global-index, global-replicas, group-name, group-replicas, job-group-index,
// restart-attempt, job-restart-attempt, job-key and, with a coordinator,
// coordinator. Only the keys a reader needs are exported ([LabelJobSetName],
// [LabelJobSetUID], [LabelRoleName], [LabelJobIndex], [LabelRestartAttempt],
// [LabelJobRestartAttempt]); the others are written and never read back.
//
// # Invariants
//
// No function modifies its arguments: counters and condition lists come back as
// copies when they change. A Decision of effect NoFailure leaves the counters as
// they were; a restart never lowers a counter; Fail and Completed always carry
// their terminal state. Creations never returns an index a child still holds,
// so no name is created twice.
//
// # Cost
//
// InPlaceAttempts.Next is O(pods) and allocates 8 bytes (the attempts it may
// change) besides its error (BenchmarkInPlaceNext: 100,000 pods in 7 ms, most
// of it parsing the annotations). Decide is O(rules × children) with at most
// one pattern search per rule and failed child; Succeed, Statuses, Obsolete,
// Resized and Suspend are O(roles + children), Surplus O(roles + children log
// children) (BenchmarkSurplus: half of 100,000 children in 8 ms);
// Creations and Identities are O(roles + children + created children). Each
// allocates only its result (and one flag per replica for Creations);
// bench_test.go measures each at 10, 1,000 and 100,000 children.
//
// # Concurrency
//
// Every function is pure; a [Matcher] is immutable once compiled. All are safe
// for concurrent use.
//
// # Differences from JobSet
//
//   - The RestartingJobSet condition's message is the restart's event message
//     ("applying RestartJobSet failure policy action (first failed job: x)").
//     [RestartEnded] ends a restart once every role has started again (our
//     reading of JobSet's JobsReady); its messages for JobSetCompleted and
//     JobSetSuspended are ours, as JobSet documents only the reasons.
//   - RestartJob on a child whose index is at least 1024 (the length limit
//     of the per-index counters) is an error wrapping
//     [ErrIndexOutOfRange] rather than a counter that cannot be written.
//   - An action Validate would reject is applied as RestartJobSet, so a failure
//     is never dropped.
//   - The in-place restart strategy (InPlaceRestart) is accepted by Validate,
//     with its template rules, as JobSet accepts it with its InPlaceRestart
//     feature gate on: jobkit has no feature gates, so nothing refuses an
//     alpha field. Its rules are here (InPlaceAttempts.Next), but no
//     Kubernetes layer runs them yet: Creations treats it as Recreate.
//     InPlaceAttempts.Next names a pod with a bad attempt annotation in its
//     error and decides over the other pods, where JobSet's sync stops.
//   - Validation: where JobSet's webhook returns a message with no field, the
//     field is ours (the one the message is about); a change of a role on
//     update is reported at the field that changed, under JobSet's
//     spec.replicatedJobs; the pod name check reports the pod name, where
//     JobSet reports the child's. Checks JobSet does not make: message
//     patterns must compile (RE2), counts must not be negative, a role may not
//     depend on itself, a per-child restart action may not cover a role of
//     more than 1024 replicas, a policy may not be added or removed on update
//     (JobSet's schema compares a policy only when both specs hold one), and
//     ValidateUpdate checks the new spec as Validate does.
//   - Elastic groups: ValidateUpdate follows JobSet v0.12's ElasticJobSet
//     rules with no gate (an Indexed role's parallelism = completions may
//     change on a running group) and keeps replicas immutable, as v0.12
//     does; [Spec.Surplus] runs a changed replicas all the same (the design
//     of JobSet's elastic KEP, not in a served JobSet), for owners whose own
//     rules allow it.
//   - Volume claims: Validate cannot compare a template with a claim that
//     already exists, as JobSet's webhook does (it reads the cluster).
//   - Exclusive placement: [Spec.Exclusive] resolves JobSet's annotations;
//     what JobSet's pod webhook does is the Kubernetes layer's to replace
//     (groups/childjobs).
//   - The active deadline is not covered.
package group
