// Package controller is a controller-runtime controller of the JobSet of
// examples/jobset/api/v1alpha2 (jobset.examples.jobkit.dev, the field names
// and labels of jobset.x-k8s.io/v1alpha2), built on jobkit's group package: a
// JobSet owns one child batch/v1 Job per replica of each role, which succeed,
// fail and restart together.
//
// Each sync reads the JobSet, its child Jobs (the field index JobOwnerIndex on
// their controller's UID) and its headless Service from the manager's cache,
// converts them onto a childjobs.Input (convert.go: the only conversion of the
// types), computes a childjobs.Plan and executes it in the order the Plan
// documents: the status first (an update with the resourceVersion read), then
// the deletions (foreground, with a UID precondition), the Service, the
// suspend and resume patches (with the child's UID), the creations, the events
// and the requeue; or, once the TTL after finishing has run out, the deletion
// of the JobSet itself (foreground). Every rule is plain/group's; this package
// decides nothing.
//
// # A stale cache
//
// Child names are deterministic (<jobset>-<role>-<index>), so a child is never
// created twice: a creation answered AlreadyExists was made by an earlier sync
// whose Job the cache has not shown yet, or its name is held by an old child
// still being deleted, and it is no error (the Job's event queues the JobSet
// again). A deletion carries the child's UID, so a cache that still shows a
// deleted child never deletes its successor. The status is written with the
// resourceVersion read, so a sync that read a status older than the last write
// is refused with a Conflict and retried; and the controller remembers the
// restart counters it last wrote to each JobSet and skips a sync whose cached
// JobSet is behind them, until the cache has caught up.
//
// # Validation
//
// The CRD's schema checks the types, enums and immutability; plain/group's
// Validate (the checks of JobSet's webhook) runs at every sync. A JobSet it
// refuses gets no child: a Failed condition (reason ReasonInvalid, the errors
// naming the fields and values as its message), terminalState Failed and a
// Warning event, once; its TTL after finishing then applies.
//
// # Options
//
// Options.ManagedBy filters the JobSets synced by spec.managedBy (the default,
// JobSet's reserved name, also takes those without); Options.ChildManagedBy
// sets spec.managedBy on the children, so that a jobkit Job controller
// (examples/controllerruntime) runs them rather than the
// kube-controller-manager; Options.Workers is the number of JobSets synced at
// once.
//
// # Cost
//
// A sync lists the JobSet's Jobs from the cache without copies and computes
// its plan in O(roles + rules × children + created children) (the group
// package's figures); it makes no API call when nothing changed. Its API
// writes are the plan's: one status update when the status changed, one call
// per child deleted, created, suspended or resumed, one for the Service.
//
// # Concurrency
//
// A Controller is safe for concurrent use; controller-runtime never syncs one
// JobSet on two workers at once.
package controller
