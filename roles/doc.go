// Package roles runs an owner of several roles whose pods it owns directly, with
// no child Jobs: a TrainingJob with a launcher and workers, an MPI job, a head and
// workers. Each role's pods run through package plan as one Job's would
// (expectations, tracking finalizer, uncounted ledger, backoff, indexes, pod
// failure policy), and the group rules of package plain/group (failure policy
// across roles, restarts of the whole group, success over target roles, startup
// order and dependsOn) decide the owner's state. Compute is the pure decision of
// one sync; reconcile.Reconciler executes it with one status write per sync at
// most.
package roles
