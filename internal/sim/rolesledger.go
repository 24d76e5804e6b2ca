package sim

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

// roleOf returns the status entry of role name in st, or a zero one.
func roleOf(st *ownedpods.Status, name string) ownedpods.RoleStatus {
	for _, rs := range st.Roles {
		if rs.Name == name {
			return rs
		}
	}
	return ownedpods.RoleStatus{}
}

// ledgerSets returns the UIDs of st's succeeded and failed ledgers.
func ledgerSets(st *batchv1.JobStatus) (succeeded, failed map[types.UID]bool) {
	succeeded, failed = map[types.UID]bool{}, map[types.UID]bool{}
	if u := st.UncountedTerminatedPods; u != nil {
		for _, uid := range u.Succeeded {
			succeeded[uid] = true
		}
		for _, uid := range u.Failed {
			failed[uid] = true
		}
	}
	return succeeded, failed
}

// ledgerPairs returns the succeeded and the failed ledgers of old and st.
func ledgerPairs(old, st *batchv1.JobStatus) [2][2]map[types.UID]bool {
	os, of := ledgerSets(old)
	ns, nf := ledgerSets(st)
	return [2][2]map[types.UID]bool{{os, ns}, {of, nf}}
}

// ledgerLen counts the UIDs in st's ledger.
func ledgerLen(st *batchv1.JobStatus) int {
	s, f := ledgerSets(st)
	return len(s) + len(f)
}

// inLedger says whether uid is in st's ledger.
func inLedger(st *batchv1.JobStatus, uid types.UID) bool {
	s, f := ledgerSets(st)
	return s[uid] || f[uid]
}
