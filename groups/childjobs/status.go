package childjobs

import (
	"slices"

	"k8s.io/utils/ptr"

	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// countersOf returns the restart counters a status records: the group's and,
// per role, jobRestarts and jobRestartsCountTowardsMax.
func countersOf(st *Status) plaingroup.Counters {
	c := plaingroup.Counters{Restarts: st.Restarts, RestartsCountTowardsMax: st.RestartsCountTowardsMax}
	for i := range st.ReplicatedJobs {
		rs := &st.ReplicatedJobs[i]
		if len(rs.JobRestarts) == 0 && len(rs.JobRestartsCountTowardsMax) == 0 {
			continue
		}
		if c.Jobs == nil {
			c.Jobs = make(map[string]plaingroup.RoleRestarts, len(st.ReplicatedJobs))
		}
		// The plain rules never modify the counters they read, so the status's
		// slices are shared, not copied.
		c.Jobs[rs.Name] = plaingroup.RoleRestarts{Restarts: rs.JobRestarts, CountTowardsMax: rs.JobRestartsCountTowardsMax}
	}
	return c
}

// equalStatus reports whether two statuses hold the same values.
func equalStatus(a, b *Status) bool {
	if a.Restarts != b.Restarts || a.RestartsCountTowardsMax != b.RestartsCountTowardsMax ||
		a.TerminalState != b.TerminalState || len(a.Conditions) != len(b.Conditions) ||
		len(a.ReplicatedJobs) != len(b.ReplicatedJobs) ||
		!ptr.Equal(a.PreviousInPlaceRestartAttempt, b.PreviousInPlaceRestartAttempt) ||
		!ptr.Equal(a.CurrentInPlaceRestartAttempt, b.CurrentInPlaceRestartAttempt) {
		return false
	}
	for i := range a.Conditions {
		x, y := &a.Conditions[i], &b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	for i := range a.ReplicatedJobs {
		x, y := &a.ReplicatedJobs[i], &b.ReplicatedJobs[i]
		if x.Name != y.Name || x.Ready != y.Ready || x.Succeeded != y.Succeeded || x.Failed != y.Failed ||
			x.Active != y.Active || x.Suspended != y.Suspended ||
			!slices.Equal(x.JobRestarts, y.JobRestarts) || !slices.Equal(x.JobRestartsCountTowardsMax, y.JobRestartsCountTowardsMax) {
			return false
		}
	}
	return true
}
