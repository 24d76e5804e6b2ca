// Package groups is the home of groups of roles in Kubernetes terms: a
// workload of several roles (a leader and workers, a launcher and ranks) that
// succeed, fail and restart together under the rules of package plain/group
// (JobSet's, jobset.x-k8s.io/v1alpha2). It holds what both shapes of a group
// share, written once; each shape is a package of its own.
//
// # Which shape is mine
//
// Pick by what the owner owns:
//
//   - The owner creates child batch/v1 Jobs, one per replica of each role, and
//     a Job controller runs their pods: package groups/childjobs. This is
//     JobSet's shape; choose it to be a JobSet drop-in, to let another Job
//     controller (the kube-controller-manager's, or a jobkit one through
//     spec.managedBy) run the pods, or when each replica needs its own Job
//     (its own status, its own pod failure policy at that level).
//   - The owner owns its roles' pods directly, with no child Jobs: package
//     groups/ownedpods. Each role runs through package plan as one Job would
//     (expectations, the tracking finalizer, the uncounted ledger, backoff,
//     indexes), and reconcile.Reconciler.SyncRoles executes a sync with one
//     status write. Choose it for fewer objects and writes (a 64-worker run
//     takes about half the API writes of child Jobs) and one status that shows
//     every role.
//
// Both take the same group rules (failure policy, success policy, startup
// order and dependsOn, restarts, suspension) in plain/group's terms, and both
// write a status with JobSet's condition types, so a user moves between them by
// changing the conversion, not the rules.
//
// # What is shared
//
// [State] is a group's state as one sync moves it: the restart counters, the
// conditions and the terminal state, read from the status ([Read]), decided by
// the failure policy before the success policy ([State.Decide]), and converted
// back to API conditions that keep what did not change ([State.Conditions]).
// [Finished] tells a finished group (Completed or Failed true) from its API
// conditions.
//
// # Cost and concurrency
//
// Every function here is O(conditions + children) and allocates the converted
// conditions; a State belongs to one sync and is not safe for concurrent use.
// The functions are pure: no clock (the time is an argument), no I/O, no input
// modified.
package groups
