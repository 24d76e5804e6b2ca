package ownedpods

import "context"

// StatusWriter writes the status of an owner of several roles: the one call of
// reconcile.Reconciler.SyncRoles that knows the owner's type (pods go through the
// Reconciler's pod client). A sync writes at most once.
type StatusWriter interface {
	// WriteStatus writes status as the status of w's object through its status
	// subresource, with w.ResourceVersion as the optimistic-concurrency
	// precondition, and returns the owner as stored (its new resourceVersion above
	// all), converted back to a Workload. A stale resourceVersion must yield the
	// API server's Conflict error (apierrors.IsConflict), which ends the sync with
	// reconcile.Report.Retry and nothing else done.
	WriteStatus(ctx context.Context, w *Workload, status Status) (*Workload, error)
}
