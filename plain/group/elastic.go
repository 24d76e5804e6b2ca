package group

import "slices"

// Surplus returns the positions in children of the children a role no longer
// holds because its replicas went down: those whose index is at or above
// their role's replicas, highest index first (then in the order of roles and
// of children), so that a caller deleting them in order removes a role's
// children from the top down, keeping the low indexes, which often hold the
// leader. The caller deletes them and leaves them out of every other rule:
// the status, success and failure are decided over the new size, and a child
// scaled away is neither a failure nor a success (JobSet's elastic KEP, whose
// design for replicas this follows). A surplus child keeps its name taken
// until it is gone, so pass every child to [Creations]: a role scaled back up
// waits for the old child of an index to go. Children of roles not in the
// spec are not included. O(roles + children log children); allocates the
// result.
func (s *Spec) Surplus(children []Child) []int {
	pos := roleIndex(s.Roles)
	var out []int
	for i := range children {
		ch := &children[i]
		if r, ok := pos(ch.Role); ok && ch.Index >= s.Roles[r].Replicas {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return int(children[b].Index) - int(children[a].Index) })
	return out
}

// Resized returns the positions in children of the running children of the
// current attempt, not being deleted, whose parallelism or completions differ
// from their role's: the children to resize in place when an Indexed role's
// size changed (JobSet's elastic Indexed Jobs). A role whose completions are
// not set or not equal to its parallelism resizes nothing, as the Job API
// allows an Indexed Job's completions to change only to its parallelism;
// NonIndexed roles resize nothing either. Children beyond their role's
// replicas ([Spec.Surplus]) are not included. O(roles + children); allocates
// the result.
func (s *Spec) Resized(children []Child, c Counters) []int {
	pos := roleIndex(s.Roles)
	var out []int
	for i := range children {
		ch := &children[i]
		r, ok := pos(ch.Role)
		if !ok || ch.Outcome != Running || ch.Deleting || !c.Current(ch) {
			continue
		}
		role := &s.Roles[r]
		if role.NonIndexed || role.Completions == nil || *role.Completions != role.Parallelism || ch.Index >= role.Replicas {
			continue
		}
		if ch.Parallelism != role.Parallelism || !equalOptional(ch.Completions, role.Completions) {
			out = append(out, i)
		}
	}
	return out
}
