// Package controller is the TrainingJob controller: a controller-runtime
// controller that runs each TrainingJob (examples/trainingjob/api/v1alpha1) with
// jobkit's plan and reconcile, as the batch/v1 Job controller runs a Job of
// completion mode Indexed. What an operator author writes is small:
//
//   - Workload converts a TrainingJob into what reconcile syncs (its spec in Job
//     terms, its status as a batchv1.JobStatus, its own retry backoff), refusing,
//     with an error naming the field, what the CRD schema cannot check;
//   - RolesWorkload converts a TrainingJob with a launcher (spec.launcher) into a
//     workload of two roles under one owner (package groups/ownedpods: the workers and the
//     launcher, no child Jobs), with the group rules of such a run;
//     RolesStatus and StatusFromRoles convert its status both ways; the
//     controller syncs it with reconcile.SyncRoles (Workload refuses it: one
//     shape, one conversion);
//   - Type gives the controllerruntime module the TrainingJob's Go type: New,
//     Workload and Roles (one conversion per shape), how to set each status,
//     where managedBy is;
//   - Setup is the one call of that module (jkcr.Setup, the call the Job
//     controller of examples/controllerruntime makes with reconcile.JobType): the pod
//     index, the TrainingJob and pod watches with the Reconciler's owner and pod
//     events, the orphan cleanup of the tracking finalizer, events, and the
//     trainingjob_controller_* Prometheus metrics on controller-runtime's
//     registry.
//
// Everything else (expectations, the crash-safe order of status writes and
// finalizer removals, slow-start creation, per-index retries and backoff, failure
// and success policies, events) is jobkit's.
//
// # Ownership
//
// Pods are owned by controller reference to the TrainingJob (Kind: group
// ml.examples.jobkit.dev, version v1alpha1) and tracked by the finalizer Finalizer
// (ml.examples.jobkit.dev/worker-tracking). Only pods whose controller reference
// has the TrainingJob's UID count: there is no selector and nothing is adopted.
// A controller takes the runs whose spec.managedBy is its name and those without
// one (a custom resource has no built-in controller to leave them to, and jobkit
// reads an owner of a kind other than Job so); it leaves runs managed by another
// name alone.
//
// # Backoff
//
// Each TrainingJob has its own retry delays (spec.backoff): Workload sets them as
// plan.Workload.Backoff, which replaces reconcile.Config.Backoff for that
// run. Unset, they are 10s doubling to at most 6m, as the API documents.
//
// # Invariants
//
//   - Nothing read from the cache is modified: Workload points into the cached
//     TrainingJob and the status is set on a copy.
//   - A TrainingJob that Workload refuses gets a Warning event InvalidTrainingJob
//     and no pod; its spec is immutable, so it is not retried.
//   - Every status write goes through the API server's validation of the CRD
//     schema (bounds and CEL rules); the integration tests check that each one the
//     controller sends is accepted.
//
// # Cost and concurrency
//
// A sync is reconcile's (plan.Compute is O(n log n) in pods, one API call per
// action) plus one conversion, O(rules + status). The Controller is safe for the
// concurrent use controller-runtime makes of it: one worker per TrainingJob key at
// a time, event handlers on the informers' goroutines.
package controller
