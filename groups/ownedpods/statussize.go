package ownedpods

import "github.com/jobkit/jobkit/plan"

// Bounds of the parts of an owner of roles' status, in bytes of JSON, beside its
// roles' Job statuses (plan.Spec.WorstStatusSize): the group's counters, terminal
// state and field names; one condition with the longest message a sync writes;
// one role's entry without its Job status.
const (
	groupFixedBytes     = 1 << 10
	groupConditionBytes = 512
	maxGroupConditions  = 8
	roleFixedBytes      = 256
)

// WorstStatusSize returns an upper bound of the size, in bytes of JSON, of any
// status a sync writes for w under o: every group condition with its longest
// message, its counters at their largest, and per role an entry whose Job status
// is at its longest (plan.Spec.WorstStatusSize: completed and failed indexes in
// their longest shape, a full ledger). Compare it with plan.MaxObjectBytes less
// the rest of the object. Each role's plan fails its role with StatusTooLarge when
// its indexes would not fit beside the rest of the object, the other roles'
// statuses included.
//
// Cost: O(number of roles × digits of their completions).
func (w *Workload) WorstStatusSize(o plan.Options) int {
	n := groupFixedBytes + maxGroupConditions*groupConditionBytes
	for _, r := range w.Roles {
		n += roleFixedBytes + len(r.Name) + r.Spec.WorstStatusSize(o)
	}
	return n
}
