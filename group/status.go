package group

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// plainConditions converts the status's conditions for the plain rules.
func plainConditions(conds []metav1.Condition) []plaingroup.Condition {
	out := make([]plaingroup.Condition, len(conds))
	for i, c := range conds {
		out[i] = plaingroup.Condition{
			Type: c.Type, Status: plaingroup.ConditionStatus(c.Status), Reason: c.Reason,
			Message: c.Message, LastTransitionTime: c.LastTransitionTime.Time,
		}
	}
	return out
}

// metaConditions converts the plain conditions back, keeping each condition of
// old that did not change as it was (its observedGeneration with it); a changed
// one gets generation.
func metaConditions(old []metav1.Condition, conds []plaingroup.Condition, generation int64) []metav1.Condition {
	if len(conds) == 0 {
		return old
	}
	out := make([]metav1.Condition, len(conds))
	for i, c := range conds {
		if j := slices.IndexFunc(old, func(o metav1.Condition) bool { return o.Type == c.Type }); j >= 0 {
			o := &old[j]
			if string(o.Status) == string(c.Status) && o.Reason == c.Reason && o.Message == c.Message && o.LastTransitionTime.Time.Equal(c.LastTransitionTime) {
				out[i] = *o
				continue
			}
		}
		out[i] = metav1.Condition{
			Type: c.Type, Status: metav1.ConditionStatus(c.Status), ObservedGeneration: generation,
			LastTransitionTime: metav1.NewTime(c.LastTransitionTime), Reason: c.Reason, Message: c.Message,
		}
	}
	return out
}

// equalStatus reports whether two statuses hold the same values.
func equalStatus(a, b *Status) bool {
	if a.Restarts != b.Restarts || a.RestartsCountTowardsMax != b.RestartsCountTowardsMax ||
		a.TerminalState != b.TerminalState || len(a.Conditions) != len(b.Conditions) ||
		len(a.ReplicatedJobs) != len(b.ReplicatedJobs) {
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
