package sim

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
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

// staleStatus checks the status of an owner that has finished and settled (no
// pod of it runs or carries the finalizer) against its pods: each role shows
// none active or ready and as many terminating as its pods of the attempt
// being deleted. It returns what differs, or "" (also while the owner has not
// finished or settled: its status may lag its pods until a sync sees them).
func staleStatus(st *ownedpods.Status, pods []*corev1.Pod) string {
	if st.TerminalState == "" {
		return ""
	}
	terminating := map[string]int32{}
	for _, p := range pods {
		if RolesKind.HasFinalizer(p) || !isTerminal(p) && p.DeletionTimestamp == nil {
			return ""
		}
		if !isTerminal(p) {
			terminating[p.Labels[plaingroup.LabelRoleName]+"/"+p.Labels[plaingroup.LabelRestartAttempt]]++
		}
	}
	for _, rs := range st.Roles {
		j := &rs.Job
		want := terminating[rs.Name+"/"+strconv.Itoa(int(rs.Attempt))]
		if j.Active != 0 || ptr.Deref(j.Ready, 0) != 0 || ptr.Deref(j.Terminating, 0) != want {
			return fmt.Sprintf("the owner finished %s and no pod of it runs, but role %s shows active %d, ready %d, terminating %d (%d pods being deleted)",
				st.TerminalState, rs.Name, j.Active, ptr.Deref(j.Ready, 0), ptr.Deref(j.Terminating, 0), want)
		}
	}
	return ""
}
