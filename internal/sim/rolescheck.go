package sim

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/reconcile/reconciletest"
)

// rolesModel is the reference of a roles run: every pod as last written, which
// pods lost their finalizer in the sync in progress, every pod counted, and the
// owner's status as last checked. It holds no copy of the controller's logic: the
// counts follow from the ledger entries that leave it.
type rolesModel struct {
	rw      *rolesWorld
	pods    map[types.UID]*corev1.Pod
	dropped []types.UID          // pods whose finalizer went in this sync
	cached  map[types.UID]bool   // pods the cache showed finished at the sync's start
	counted map[types.UID]string // pod → "succeeded" or "failed"
	total   map[string][2]int32  // role → pods counted succeeded, failed
	last    ownedpods.Status
	// leaving holds the workers seen beyond the workers' size (an index at
	// or above their completions) after a resize: scaled away, such a pod
	// is removed without being recorded, as a Job's pods beyond a smaller
	// completions are.
	leaving map[types.UID]bool
	sizes   map[string]int32 // role → its pod count as the owner last said (the workers only)
	created int
	clean   int // syncs since the last fault that may hide the controller's writes
}

func newRolesModel(rw *rolesWorld) *rolesModel {
	m := &rolesModel{rw: rw, pods: map[types.UID]*corev1.Pod{}, counted: map[types.UID]string{}, total: map[string][2]int32{}, leaving: map[types.UID]bool{}}
	if w, err := rw.owners.Get(rw.ns, rw.name); err == nil {
		m.last = w.Status
	}
	rw.cluster.OnWrite(m.observe)
	return m
}

// observe runs under the cluster's lock for every write: it keeps each pod's last
// state and notes the finalizers removed during a sync.
func (m *rolesModel) observe(ev reconciletest.WatchEvent) {
	p := ev.Pod
	if p == nil {
		return
	}
	if old, ok := m.pods[p.UID]; ok && m.rw.inSync && RolesKind.HasFinalizer(old) && !RolesKind.HasFinalizer(p) {
		m.dropped = append(m.dropped, p.UID)
	}
	m.pods[p.UID] = p
}

// beforeSync notes what the controller's cache shows before a sync.
func (m *rolesModel) beforeSync() {
	m.dropped = m.dropped[:0]
	m.markLeaving()
	m.cached = map[types.UID]bool{}
	for _, p := range m.rw.cluster.Cache().Pods(m.rw.ns) {
		if isTerminal(p) {
			m.cached[p.UID] = true
		}
	}
}

// afterSync checks one sync: its calls, and the status it left against the
// status before it.
func (m *rolesModel) afterSync(calls []reconciletest.Call, clean bool) {
	rw := m.rw
	writes := 0
	for _, c := range calls {
		switch {
		case c.Op == reconciletest.OpUpdateStatus:
			writes++
			if apierrors.IsInvalid(c.Err) {
				rw.violate(InvInvalidStatus, "the status write was refused: %v", c.Err)
			}
		case c.Op == reconciletest.OpCreatePod && c.Written:
			m.created++
		}
	}
	if writes > 1 {
		rw.violate(InvStatusWrites, "%d status writes in one sync", writes)
	}
	w, err := rw.owners.Get(rw.ns, rw.name)
	if err != nil {
		rw.violate(InvNotFinished, "the owner is gone: %v", err)
		return
	}
	st := w.Status
	m.markLeaving()
	m.checkStatus(&m.last, &st)
	m.checkRecordFirst(&st)
	if clean {
		m.clean++
	} else {
		m.clean = 0
	}
	if m.clean >= cleanSyncs {
		m.checkIndexes()
	}
	m.last = st
}

// checkStatus checks the step from old to st: nothing decreases, and per role
// the counters grow by exactly the pods that left its ledger, each once, while
// only pods of the role's current attempt enter it.
func (m *rolesModel) checkStatus(old, st *ownedpods.Status) {
	rw := m.rw
	if st.Restarts < old.Restarts || st.RestartsCountTowardsMax < old.RestartsCountTowardsMax {
		rw.violate(InvBackwards, "restarts %d→%d, towards max %d→%d", old.Restarts, st.Restarts, old.RestartsCountTowardsMax, st.RestartsCountTowardsMax)
	}
	if old.TerminalState != "" && st.TerminalState != old.TerminalState {
		rw.violate(InvBackwards, "terminal state %q→%q", old.TerminalState, st.TerminalState)
	}
	for _, rs := range st.Roles {
		prev := roleOf(old, rs.Name)
		if rs.Attempt < prev.Attempt || rs.Succeeded < prev.Succeeded || rs.Failed < prev.Failed || rs.FailedOnTheirOwn < prev.FailedOnTheirOwn {
			rw.violate(InvBackwards, "role %s: attempt %d→%d, succeeded %d→%d, failed %d→%d, failed on their own %d→%d", rs.Name, prev.Attempt, rs.Attempt,
				prev.Succeeded, rs.Succeeded, prev.Failed, rs.Failed, prev.FailedOnTheirOwn, rs.FailedOnTheirOwn)
			return
		}
		// At an advance the attempt's status starts afresh: what leaves the old
		// attempt's ledger in that write counts in the totals only.
		base, advanced := prev.Job, rs.Attempt != prev.Attempt
		if advanced {
			base = batchv1.JobStatus{}
		}
		var grew [2]int32
		for i, pair := range ledgerPairs(&prev.Job, &rs.Job) {
			was, now := pair[0], pair[1]
			for uid := range was {
				if now[uid] {
					continue
				}
				if k, ok := m.counted[uid]; ok {
					rw.violate(InvCountedTwice, "role %s: pod %s counted again (first as %s)", rs.Name, uid, k)
					return
				}
				if i == 1 && m.succeededNow(rs, &base, uid) {
					// Recorded as failed while it was being deleted, then it
					// succeeded before its finalizer went: plan takes it out of the
					// failures, and its index or the succeeded ledger counts it.
					continue
				}
				m.counted[uid] = []string{"succeeded", "failed"}[i]
				grew[i]++
			}
			for uid := range now {
				if !was[uid] && !m.entered(rs, uid, i == 0) {
					return
				}
			}
		}
		// An Indexed role records a succeeded pod by its index, as a Job does: the
		// completed indexes are the record, and no UID is kept.
		newIndexes, ok := m.newIndexes(rs, &base)
		if !ok {
			return
		}
		grew[0] += newIndexes
		t := m.total[rs.Name]
		t[0], t[1] = t[0]+grew[0], t[1]+grew[1]
		m.total[rs.Name] = t
		attempt := [2]int32{rs.Job.Succeeded - base.Succeeded, rs.Job.Failed - base.Failed}
		if advanced && (attempt != [2]int32{} || ledgerLen(&rs.Job) > 0) {
			rw.violate(InvOldAttemptCounted, "role %s advanced to attempt %d with a status that is not fresh: succeeded %d, failed %d, %d uncounted",
				rs.Name, rs.Attempt, rs.Job.Succeeded, rs.Job.Failed, ledgerLen(&rs.Job))
			return
		}
		if !advanced && attempt != grew || rs.Succeeded-prev.Succeeded != grew[0] || rs.Failed-prev.Failed != grew[1] {
			rw.violate(InvCount, "role %s attempt %d: %d succeeded and %d failed pods left the ledger, but the attempt's counters went %d→%d and %d→%d, the totals %d→%d and %d→%d",
				rs.Name, rs.Attempt, grew[0], grew[1], base.Succeeded, rs.Job.Succeeded, base.Failed, rs.Job.Failed, prev.Succeeded, rs.Succeeded, prev.Failed, rs.Failed)
			return
		}
	}
}

// succeededNow says whether the pod uid of role rs succeeded and is recorded so
// in this write: its index newly completed, or the succeeded ledger.
func (m *rolesModel) succeededNow(rs ownedpods.RoleStatus, base *batchv1.JobStatus, uid types.UID) bool {
	p := m.pods[uid]
	if p == nil || p.Status.Phase != corev1.PodSucceeded {
		return false
	}
	if s, _ := ledgerSets(&rs.Job); s[uid] {
		return true
	}
	x, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation])
	if err != nil {
		return false
	}
	was, _ := indexes.Parse(base.CompletedIndexes, indexLimit)
	now, _ := indexes.Parse(rs.Job.CompletedIndexes, indexLimit)
	return now.Has(x) && !was.Has(x)
}

// newIndexes returns how many indexes role rs completed since base, each with a
// succeeded pod of the role's attempt; none may go but those an elastic
// shrink dropped, which it takes out of base (its completed indexes and
// succeeded counter).
func (m *rolesModel) newIndexes(rs ownedpods.RoleStatus, base *batchv1.JobStatus) (int32, bool) {
	was, err1 := indexes.Parse(base.CompletedIndexes, indexLimit)
	now, err2 := indexes.Parse(rs.Job.CompletedIndexes, indexLimit)
	if err1 != nil || err2 != nil {
		m.rw.violate(InvCount, "role %s: completedIndexes %q→%q: %v %v", rs.Name, base.CompletedIndexes, rs.Job.CompletedIndexes, err1, err2)
		return 0, false
	}
	if size, ok := m.size(rs.Name); ok {
		// An elastic shrink drops the completed indexes beyond the new size,
		// as a Job's does: they are no longer the role's, nor in the
		// attempt's succeeded counter (the totals keep them).
		kept := was.Trim(int(size))
		base.Succeeded -= int32(was.Count() - kept.Count())
		was = kept
	}
	if now.IntersectionCount(was) != was.Count() {
		m.rw.violate(InvBackwards, "role %s: completedIndexes %q→%q", rs.Name, base.CompletedIndexes, rs.Job.CompletedIndexes)
		return 0, false
	}
	attempt := strconv.Itoa(int(rs.Attempt))
	for x := range now.All() {
		if was.Has(x) {
			continue
		}
		found := false
		for _, p := range m.pods {
			found = found || (p.Labels[plaingroup.LabelRoleName] == rs.Name && p.Labels[plaingroup.LabelRestartAttempt] == attempt &&
				p.Annotations[batchv1.JobCompletionIndexAnnotation] == strconv.Itoa(x) && p.Status.Phase == corev1.PodSucceeded)
		}
		if !found {
			m.rw.violate(InvCount, "role %s attempt %d: index %d completed with no succeeded pod of the attempt", rs.Name, rs.Attempt, x)
			return 0, false
		}
	}
	return int32(now.Count() - was.Count()), true
}

// indexLimit bounds the indexes parsed from a status.
const indexLimit = 1 << 20

// entered checks a pod that entered role rs's ledger: not counted before, of the
// role and its current attempt, finished (succeeded when succeeded says so).
func (m *rolesModel) entered(rs ownedpods.RoleStatus, uid types.UID, succeeded bool) bool {
	rw := m.rw
	if k, ok := m.counted[uid]; ok {
		rw.violate(InvCountedTwice, "role %s: pod %s entered the ledger after it was counted as %s", rs.Name, uid, k)
		return false
	}
	p := m.pods[uid]
	if p == nil {
		rw.violate(InvCount, "role %s: unknown pod %s entered the ledger", rs.Name, uid)
		return false
	}
	if p.Labels[plaingroup.LabelRoleName] != rs.Name || p.Labels[plaingroup.LabelRestartAttempt] != strconv.Itoa(int(rs.Attempt)) {
		rw.violate(InvOldAttemptCounted, "pod %s (role %q, attempt %q) entered the ledger of role %s at attempt %d",
			p.Name, p.Labels[plaingroup.LabelRoleName], p.Labels[plaingroup.LabelRestartAttempt], rs.Name, rs.Attempt)
		return false
	}
	if succeeded && p.Status.Phase != corev1.PodSucceeded {
		rw.violate(InvCount, "pod %s entered the succeeded ledger of role %s in phase %s", p.Name, rs.Name, p.Status.Phase)
		return false
	}
	return true
}

// checkRecordFirst: a pod of a role's current attempt that the controller saw
// finished and whose finalizer it removed in this sync is in the ledger or
// counted: its finalizer never goes before it is recorded.
func (m *rolesModel) checkRecordFirst(st *ownedpods.Status) {
	for _, uid := range m.dropped {
		p := m.pods[uid]
		if p == nil || !m.cached[uid] {
			continue
		}
		rs := roleOf(st, p.Labels[plaingroup.LabelRoleName])
		if rs.Name == "" || p.Labels[plaingroup.LabelRestartAttempt] != strconv.Itoa(int(rs.Attempt)) {
			continue // a stray: never counted
		}
		if m.leaving[uid] {
			continue // scaled away: never counted
		}
		if _, ok := m.counted[uid]; ok || inLedger(&rs.Job, uid) {
			continue
		}
		if done, err := indexes.Parse(rs.Job.CompletedIndexes, indexLimit); err == nil && p.Status.Phase == corev1.PodSucceeded {
			if x, err := strconv.Atoi(p.Annotations[batchv1.JobCompletionIndexAnnotation]); err == nil && done.Has(x) {
				continue
			}
		}
		m.rw.violate(InvRecordFirst, "pod %s of role %s attempt %d lost its finalizer, finished, before it was recorded", p.Name, rs.Name, rs.Attempt)
		return
	}
}

// checkIndexes: long after any fault, no index of the workers has two live pods
// of one attempt.
func (m *rolesModel) checkIndexes() {
	live := map[string]string{}
	for _, p := range m.rw.ownerPods() {
		if isTerminal(p) || p.DeletionTimestamp != nil || p.Labels[plaingroup.LabelRoleName] != "worker" {
			continue
		}
		k := p.Labels[plaingroup.LabelRestartAttempt] + "/" + p.Annotations[batchv1.JobCompletionIndexAnnotation]
		if other, ok := live[k]; ok {
			m.rw.violate(InvDuplicateIndex, "attempt/index %s has two live pods: %s and %s", k, other, p.Name)
			return
		}
		live[k] = p.Name
	}
}

// done reports whether the run has nothing left to do: the owner finished
// (Store.DoneFunc: a terminal state, no pod with the finalizer), nothing is
// uncounted and no pod runs. DoneFunc alone stops a sync early: ownedpods.Compute
// still counts a ledger entry or stops a pod that runs after its finalizer went.
func (m *rolesModel) done() bool {
	rw := m.rw
	if ok, _ := rw.owners.DoneFunc()(rw.ns, rw.name); !ok {
		return false
	}
	for _, rs := range m.last.Roles {
		if ledgerLen(&rs.Job) > 0 {
			return false
		}
	}
	for _, p := range rw.ownerPods() {
		if !isTerminal(p) {
			return false
		}
	}
	return true
}

// checkEnd checks the end of a run: the owner finished with nothing uncounted,
// no finalizer left, nothing running, and totals equal to the pods counted.
func (m *rolesModel) checkEnd() {
	rw := m.rw
	st := &m.last
	if msg := staleStatus(st, rw.ownerPods()); msg != "" {
		rw.violate(InvStaleStatus, "%s", msg)
		return
	}
	if !m.done() || st.TerminalState == "" {
		rw.violate(InvNotFinished, "the owner did not finish: state %q, restarts %d, roles %+v", st.TerminalState, st.Restarts, st.Roles)
		return
	}
	if st.TerminalState == "Completed" && roleOf(st, "launcher").Succeeded < 1 {
		rw.violate(InvCount, "completed with no launcher pod counted succeeded")
	}
	for _, rs := range st.Roles {
		if n := ledgerLen(&rs.Job); n > 0 {
			rw.violate(InvUncountedLeft, "role %s ends with %d pods uncounted", rs.Name, n)
		}
		if t := m.total[rs.Name]; rs.Succeeded != t[0] || rs.Failed != t[1] {
			rw.violate(InvCount, "role %s totals succeeded %d failed %d, pods counted %d and %d", rs.Name, rs.Succeeded, rs.Failed, t[0], t[1])
		}
		if rs.FailedOnTheirOwn > rs.Failed {
			rw.violate(InvCount, "role %s: %d pods failed on their own, more than the %d failed, with nothing uncounted", rs.Name, rs.FailedOnTheirOwn, rs.Failed)
		}
	}
	for _, p := range rw.ownerPods() {
		if RolesKind.HasFinalizer(p) {
			rw.violate(InvFinalizerLeft, "pod %s keeps the finalizer", p.Name)
		}
		if !isTerminal(p) && p.DeletionTimestamp == nil {
			rw.violate(InvRunningAfterFinish, "pod %s is %s after the owner finished %s", p.Name, p.Status.Phase, st.TerminalState)
		}
	}
}
