package childjobs

import "context"

// StatusWriter writes the status of a group: the one call of
// reconcile.Reconciler.SyncChildJobs that knows the group's type (the child
// Jobs, the Service and the group's deletion go through its
// reconcile.ChildJobClient). A sync writes at most once.
type StatusWriter interface {
	// WriteStatus writes status as the status of in.Object through its status
	// subresource, with in.ResourceVersion as the optimistic-concurrency
	// precondition, and returns the group as stored (its new resourceVersion
	// above all), converted back onto an Input; of it the executor reads the
	// group's fields only (identity, Object, spec and status), never Children,
	// ServiceExists, ControllerName, ChildManagedBy or Now. A stale
	// resourceVersion must yield the API server's Conflict error
	// (apierrors.IsConflict), which ends the sync with reconcile.Report.Retry and
	// nothing else done.
	WriteStatus(ctx context.Context, in *Input, status Status) (*Input, error)
}
