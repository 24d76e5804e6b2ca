package reconcile

import "github.com/jobkit/jobkit/groups/ownedpods"

// SetComputeRoles makes SyncRoles decide with f in place of ownedpods.Compute until the
// returned restore is called, so that the external tests execute hand-built plans.
// Tests that call it must not run in parallel.
func SetComputeRoles(f func(ownedpods.Input) (*ownedpods.Plan, error)) (restore func()) {
	saved := computeRoles
	computeRoles = f
	return func() { computeRoles = saved }
}
