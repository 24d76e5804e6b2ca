// Package controller is a controller-runtime controller of the JobSet of
// examples/jobset/api/v1alpha2 (jobset.examples.jobkit.dev, the field names
// and labels of jobset.x-k8s.io/v1alpha2), built on jobkit's groups/childjobs
// and reconcile packages: a
// JobSet owns one child batch/v1 Job per replica of each role, which succeed,
// fail and restart together.
//
// The package is a conversion and a Setup call: convert.go converts the API
// types (JobSetType, the reconcile.Type of JobSets: Input onto
// childjobs.Input, APIStatus back), and Setup hands JobSetType to
// controllerruntime.Setup, which serves any group of child Jobs. Each sync
// reads the JobSet, its child Jobs (the field index JobOwnerIndex on their
// controller's UID) and its headless Service from the manager's cache and
// hands them to jobkit's executor, reconcile.Reconciler.SyncChildJobs. The
// executor plans the sync (childjobs.Compute) and executes it in the order
// childjobs.Plan documents, with what a stale cache needs (the status written
// with the resourceVersion read and planned from as written until the cache
// shows it, deletions with the child's UID, creations of deterministic names,
// the children created or deleted awaited in the cache): see the reconcile
// package, "Child Jobs". Every rule is plain/group's; this package decides
// nothing.
//
// # Validation
//
// The CRD's schema checks the types, enums and immutability;
// childjobs.Input.Validate (the checks of JobSet's webhook, with its field
// paths and words) runs at every sync, in controllerruntime (Validate here is
// the same check of a JobSet). A JobSet it refuses gets no child: a Failed
// condition (reason ReasonInvalid, the errors naming the fields and values as
// its message), terminalState Failed and a Warning event, once; its TTL after
// finishing then applies. Default and ValidateUpdate are JobSet's webhook
// defaults and update checks, for a webhook to call; the example has none, and
// its CRD's immutability rules are stricter than JobSet's (a suspended
// JobSet's pod template may not change either).
//
// # Options
//
// Options.ManagedBy filters the JobSets synced by spec.managedBy (the default,
// JobSet's reserved name, also takes those without); Options.ChildManagedBy
// sets spec.managedBy on the children, so that a jobkit Job controller
// (examples/controllerruntime) runs them rather than the
// kube-controller-manager; Options.Workers is the number of JobSets synced at
// once. Options.InPlaceRestart is JobSet's feature gate of that name: on,
// the pods of JobSets under restartStrategy InPlaceRestart are watched and
// their barrier moves; off, such a JobSet is failed as invalid (ReasonInvalid),
// as JobSet's webhook refuses it, because Setup validates each JobSet under
// Options.FeatureGates (Gated). The metrics are controllerruntime's,
// jobset_controller_*, served by the manager.
//
// # Cost
//
// A sync lists the JobSet's Jobs from the cache without copies and computes
// its plan in O(roles + rules × children + created children) (the childjobs
// package's figures); it makes no API call when nothing changed. Its API
// writes are the plan's: one status update when the status changed, one call
// per child deleted, created, suspended or resumed, one for the Service.
//
// # Concurrency
//
// A Controller is safe for concurrent use; controller-runtime never syncs one
// JobSet on two workers at once.
package controller
