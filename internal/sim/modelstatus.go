package sim

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// observeJob checks a new version of the Job (a Task presented as one).
func (m *model) observeJob(typ watch.EventType, cur *batchv1.Job) {
	if m.job == nil {
		m.job, m.uid = cur, cur.UID
		m.maxCompletions = int(deref32(cur.Spec.Completions, 0))
		return
	}
	if cur.UID != m.uid {
		return
	}
	m.maxCompletions = max(m.maxCompletions, int(deref32(cur.Spec.Completions, 0)))
	prev := m.job
	m.job = cur
	if typ == watch.Deleted {
		m.deleted = true
		return
	}
	if equality.Semantic.DeepEqual(&prev.Status, &cur.Status) {
		return
	}
	// Elastic Indexed Jobs: a status written under lower completions forgets the
	// indexes at or above them (a scale-down undone before any write trims
	// nothing).
	if m.indexed() {
		c := int(deref32(cur.Spec.Completions, 0))
		for ix := range m.succeededIx {
			if ix >= c {
				delete(m.succeededIx, ix)
			}
		}
	}
	m.checkStatusWrite(prev, cur)
}

// checkStatusWrite checks one stored change of the Job's status.
func (m *model) checkStatusWrite(prev, cur *batchv1.Job) {
	ps, cs := &prev.Status, &cur.Status
	if cs.Failed < ps.Failed {
		m.w.violate(InvBackwards, "status.failed went from %d to %d", ps.Failed, cs.Failed)
	}
	completions := int(deref32(cur.Spec.Completions, 0))
	if m.indexed() {
		before, after := parseIndexes(ps.CompletedIndexes), parseIndexes(cs.CompletedIndexes)
		for ix := range before {
			if !after[ix] && ix < completions {
				m.w.violate(InvBackwards, "completedIndexes lost index %d (%q → %q, completions %d)", ix, ps.CompletedIndexes, cs.CompletedIndexes, completions)
			}
		}
		if n := countBelow(after, completions); int(cs.Succeeded) != n {
			m.w.violate(InvCount, "status.succeeded is %d but completedIndexes %q holds %d indexes below completions %d", cs.Succeeded, cs.CompletedIndexes, n, completions)
		}
		fb, fa := parseIndexes(deref(ps.FailedIndexes)), parseIndexes(deref(cs.FailedIndexes))
		for ix := range fb {
			if !fa[ix] && ix < completions {
				m.w.violate(InvBackwards, "failedIndexes lost index %d (%q → %q)", ix, deref(ps.FailedIndexes), deref(cs.FailedIndexes))
			}
		}
	} else if cs.Succeeded < ps.Succeeded {
		m.w.violate(InvBackwards, "status.succeeded went from %d to %d", ps.Succeeded, cs.Succeeded)
	}

	// The ledger: every UID enters it once, leaves it once its finalizer is gone,
	// and the counter grows by the UIDs that left.
	var prevS, prevF, curS, curF []types.UID
	if u := ps.UncountedTerminatedPods; u != nil {
		prevS, prevF = u.Succeeded, u.Failed
	}
	if u := cs.UncountedTerminatedPods; u != nil {
		curS, curF = u.Succeeded, u.Failed
	}
	leftS := m.moveLedger(m.inS, prevS, curS, wonSucceeded)
	leftF := m.moveLedger(m.inF, prevF, curF, wonFailed)
	if !m.indexed() && int(cs.Succeeded-ps.Succeeded) != leftS {
		m.w.violate(InvCount, "status.succeeded went from %d to %d while %d UIDs left uncountedTerminatedPods.succeeded", ps.Succeeded, cs.Succeeded, leftS)
	}
	if int(cs.Failed-ps.Failed) != leftF {
		m.w.violate(InvCount, "status.failed went from %d to %d while %d UIDs left uncountedTerminatedPods.failed", ps.Failed, cs.Failed, leftF)
	}
}

// moveLedger applies a change of one uncounted list and returns how many UIDs left it.
func (m *model) moveLedger(in map[types.UID]bool, prev, cur []types.UID, as outcome) int {
	now := make(map[types.UID]bool, len(cur))
	for _, uid := range cur {
		if now[uid] {
			m.w.violate(InvCountedTwice, "UID %s is listed twice in uncountedTerminatedPods", uid)
		}
		now[uid] = true
		if in[uid] {
			continue
		}
		if m.counted[uid] != tracked {
			m.w.violate(InvCountedTwice, "pod %s entered uncountedTerminatedPods again (%s)", m.podName(uid), m.ledgerText(uid))
		}
		if ps := m.pods[uid]; ps != nil && ps.released && ps.outcome == notCounted {
			m.w.violate(InvReleased, "released pod %s entered uncountedTerminatedPods", m.podName(uid))
		}
		in[uid] = true
	}
	left := 0
	for _, uid := range prev {
		if now[uid] || !in[uid] {
			continue
		}
		delete(in, uid)
		ps := m.pods[uid]
		if ps != nil && ps.finalizer {
			// Taken out of the ledger before its finalizer went: not counted (the
			// counter check below sees it), and it may be recorded again.
			continue
		}
		left++
		if ps != nil && ps.outcome != as {
			m.w.violate(InvCount, "pod %s was counted as %s, the model says %s", m.podName(uid), as, ps.outcome)
		}
		m.counted[uid] = as
	}
	return left
}
