package group

// RoleStatus is one entry of status.replicatedJobsStatus: counts of children, not
// of pods.
type RoleStatus struct {
	// Name is the role's name.
	Name string
	// Ready counts running children whose ready and succeeded pods reach
	// min(parallelism, completions).
	Ready int32
	// Succeeded and Failed count finished children.
	Succeeded, Failed int32
	// Active counts running children with an active pod that are not being
	// deleted.
	Active int32
	// Suspended counts running children with spec.suspend set.
	Suspended int32
	// JobRestarts and JobRestartsCountTowardsMax are the role's per-index restart
	// counters, Replicas items long (at most maxJobRestartsItems), or nil when
	// every one is zero.
	JobRestarts, JobRestartsCountTowardsMax []int32
}

// Started reports whether every child of the role is ready or finished
// (ready+succeeded+failed == replicas): the test of InOrder startup and of a
// Ready dependency.
func (s *RoleStatus) Started(replicas int32) bool {
	return int64(s.Ready)+int64(s.Succeeded)+int64(s.Failed) == int64(replicas)
}

// Complete reports whether every child of the role has succeeded (succeeded ==
// replicas): the test of a Complete dependency.
func (s *RoleStatus) Complete(replicas int32) bool { return s.Succeeded == replicas }

// childReady reports whether a running child of role r counts as ready: its
// ready and succeeded pods reach r.ExpectedPods().
func childReady(r *Role, ch *Child) bool {
	return int64(ch.Ready)+int64(ch.Succeeded) >= int64(r.ExpectedPods())
}

// Statuses returns one RoleStatus per role, in the order of roles, counting the
// children of the current attempt only (children of an old attempt are on their
// way out). Children of roles not in the list are left out. It is O(roles +
// children) and allocates the result (and a map when there are more than a few
// roles).
func Statuses(roles []Role, children []Child, c Counters) []RoleStatus {
	out := make([]RoleStatus, len(roles))
	pos := roleIndex(roles)
	for i := range roles {
		out[i].Name = roles[i].Name
		rr := c.Jobs[roles[i].Name]
		out[i].JobRestarts = perIndex(rr.Restarts, roles[i].Replicas)
		out[i].JobRestartsCountTowardsMax = perIndex(rr.CountTowardsMax, roles[i].Replicas)
	}
	for k := range children {
		ch := &children[k]
		i, ok := pos(ch.Role)
		if !ok || !c.Current(ch) {
			continue
		}
		s := &out[i]
		switch ch.Outcome {
		case Succeeded:
			s.Succeeded++
		case Failed:
			s.Failed++
		default:
			if childReady(&roles[i], ch) {
				s.Ready++
			}
			if ch.Active > 0 && !ch.Deleting {
				s.Active++
			}
			if ch.Suspended {
				s.Suspended++
			}
		}
	}
	return out
}

// perIndex returns the counters padded or cut to replicas items (at most
// maxJobRestartsItems), or nil when all are zero.
func perIndex(s []int32, replicas int32) []int32 {
	n := min(int(max(replicas, 0)), maxJobRestartsItems)
	nonzero := false
	for i, v := range s {
		if i < n && v != 0 {
			nonzero = true
			break
		}
	}
	if !nonzero {
		return nil
	}
	out := make([]int32, n)
	copy(out, s)
	return out
}

// roleIndex returns a lookup of a role's position by name: a linear scan for a
// few roles, a map beyond.
func roleIndex(roles []Role) func(string) (int, bool) {
	if len(roles) <= 8 {
		return func(name string) (int, bool) {
			for i := range roles {
				if roles[i].Name == name {
					return i, true
				}
			}
			return -1, false
		}
	}
	m := make(map[string]int, len(roles))
	for i := range roles {
		if _, dup := m[roles[i].Name]; !dup {
			m[roles[i].Name] = i
		}
	}
	return func(name string) (int, bool) {
		i, ok := m[name]
		return i, ok
	}
}

// findStatus returns the status of the named role in statuses, or nil.
func findStatus(statuses []RoleStatus, name string) *RoleStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}
