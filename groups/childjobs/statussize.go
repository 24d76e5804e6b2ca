package childjobs

// Bounds of the parts of a group's status, in bytes of JSON, used by
// WorstStatusSize: the group's counters, terminal state, in-place attempts and
// field names; one condition with the longest message a sync writes (role and kind
// names of up to 63 characters included); one role's entry without its per-index
// counters; one per-index counter.
const (
	groupFixedBytes     = 1 << 10
	groupConditionBytes = 512
	maxGroupConditions  = 8
	roleFixedBytes      = 256
	counterBytes        = len("2147483647,")
	maxCounterItems     = 1024 // a role's per-index restart counters (plaingroup)
)

// WorstStatusSize returns an upper bound of the size, in bytes of JSON, of any
// status a sync writes for the group in: its counters at their largest, every
// condition JobSet writes with its longest message, and per role an entry with
// both per-index restart counters full (Replicas items, at most 1024). Compare it
// with plan.MaxObjectBytes less the rest of the object: a group's status grows with
// its number of roles and replicas, not with its pods.
//
// Cost: O(number of roles).
func (in *Input) WorstStatusSize() int {
	n := groupFixedBytes + maxGroupConditions*groupConditionBytes
	for _, r := range in.Spec.Roles {
		items := min(max(int(r.Replicas), 0), maxCounterItems)
		n += roleFixedBytes + len(r.Name) + 2*items*counterBytes
	}
	return n
}
