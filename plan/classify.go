package plan

import (
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/podfailurepolicy"
)

// podInfo holds what the plan needs to know of one pod, read once (factReader,
// as claim takes the pod); later phases read it instead of the pod, and touch the
// pod itself only for the few still carrying the tracking finalizer that finished
// or are in the ledger. Only the memo of policyMatch is written after.
type podInfo struct {
	pod *corev1.Pod
	// finish is when the pod finished (backoff.FinishTime), read only for the pods
	// the backoff record is rebuilt from (backoffSuccess or backoffFailure) and
	// tracked failed pods.
	finish time.Time
	index  int // completion index; plainindexes.Unknown when none or NonIndexed
	// match is the memo of policyMatch (valid once matched), in a slice claim
	// allocates for the Job's pods when the Job has a pod failure policy.
	match       *podfailurepolicy.Result
	matched     bool
	validIndex  bool // Indexed and 0 <= index < completions
	succeeded   bool // phase Succeeded
	finalizer   bool // carries the tracking finalizer
	tracked     bool // carries the finalizer and its removal is not pending
	active      bool
	terminating bool
	ready       bool
	failed      bool // counts as failed (phase Failed, or deleted unless policy Failed)
	// backoffSuccess and backoffFailure: the pod is a success, or a failure, of the
	// backoff record rebuilt from the pods (rebuildBackoff).
	backoffSuccess, backoffFailure bool
	// inUncountedSucceeded and inUncountedFailed: the pod carries the finalizer and
	// its UID is in uncountedTerminatedPods as read (env).
	inUncountedSucceeded, inUncountedFailed bool
}

// policyMatch matches the pod failure policy fp once per pod: the result is kept in
// pi.match (the only fact of a podInfo written after claim).
func policyMatch(fp *batchv1.PodFailurePolicy, pi *podInfo) podfailurepolicy.Result {
	if !pi.matched {
		if pi.match == nil {
			pi.match = new(podfailurepolicy.Result) // claim gives one to a Job with a policy
		}
		*pi.match, pi.matched = podfailurepolicy.Match(fp, pi.pod), true
	}
	return *pi.match
}

// podCounts are the Job's pods by state, for status.active, ready and terminating.
// They are derived once from the pods (classified.add) and once more from the plan's
// deletions and creations (after).
type podCounts struct {
	active, ready, terminating int32
}

// after returns the counts once the deletions and creations of a are done: every
// deleted pod was active and becomes terminating.
func (c podCounts) after(a actions) podCounts {
	n := int32(len(a.delete))
	c.active += int32(len(a.create)) - n
	c.terminating += n
	c.ready -= a.deletedReady
	return c
}

// classified is what the pass over the pods collects for the later phases (add, as
// claim reads each pod's facts) and classify completes. The lists hold pointers
// into claimed.infos, in the order the pods were listed, so that a phase walks only
// the pods its rule can concern: most pods of a big Job are finished and counted,
// and no phase after the pass reads them again.
type classified struct {
	pods []podInfo // the facts of the Job's pods (claimed.infos)
	// active are the active pods; tracked those carrying the tracking finalizer
	// with no removal pending (podInfo.tracked).
	active, tracked []*podInfo
	// inLedger are the pods carrying the finalizer whose UID is in
	// uncountedTerminatedPods as read.
	inLedger []*corev1.Pod
	// terminatingIx are the indexes of the terminating pods with one, for an
	// Indexed Job under podReplacementPolicy Failed (nil otherwise).
	terminatingIx []int
	// newSucceeded and newFailed are the finished pods with the finalizer that the
	// ledger does not list yet.
	newSucceeded, newFailed []*podInfo
	// backoffFailed are the failures of the backoff record rebuilt from the pods
	// (podInfo.backoffFailure); lastSuccess is the latest finish of its successes
	// (podInfo.backoffSuccess), when anySuccess.
	backoffFailed []*podInfo
	lastSuccess   time.Time
	anySuccess    bool
	// succeeded and failed are the counts once every finished pod is counted
	// (failed: those that count toward backoffLimit).
	succeeded, failed int32
	observed          podCounts
	restarts          int64 // claimed.restarts
	// unfailed counts the pods in uncountedFailed whose state now says they are
	// not failures; newFailedCounted the new failures that count toward
	// backoffLimit (both for classify's totals).
	unfailed         int
	newFailedCounted int32
}

// listLens are the lengths of the lists of a classified.
type listLens struct{ active, tracked, backoffFailed, newSucceeded, newFailed int }

func (out *classified) lens() listLens {
	return listLens{len(out.active), len(out.tracked), len(out.backoffFailed), len(out.newSucceeded), len(out.newFailed)}
}

// reserve makes room in out's empty lists for a little more than n's lengths.
func (out *classified) reserve(n listLens) {
	room := func(k int) []*podInfo {
		if k == 0 {
			return nil
		}
		return make([]*podInfo, 0, k+k/16+8)
	}
	out.active, out.tracked, out.backoffFailed = room(n.active), room(n.tracked), room(n.backoffFailed)
	out.newSucceeded, out.newFailed = room(n.newSucceeded), room(n.newFailed)
}

// add classifies one of the Job's pods by the facts claim read of it: its state
// for the counts, the lists of the later phases, the newly finished pods, the
// backoff record's successes and failures.
func (out *classified) add(e *env, pi *podInfo) {
	n := &out.observed
	if pi.active {
		out.active = append(out.active, pi)
		n.active++
		if pi.ready {
			n.ready++
		}
	}
	if pi.terminating {
		n.terminating++
		if e.spec.indexed && e.spec.onlyFailed && pi.index >= 0 {
			out.terminatingIx = append(out.terminatingIx, pi.index)
		}
	}
	if pi.backoffSuccess && (!out.anySuccess || pi.finish.After(out.lastSuccess)) {
		out.lastSuccess, out.anySuccess = pi.finish, true
	}
	if pi.backoffFailure {
		out.backoffFailed = append(out.backoffFailed, pi)
	}
	if pi.inUncountedSucceeded || pi.inUncountedFailed {
		out.inLedger = append(out.inLedger, pi.pod)
	}
	if !pi.tracked {
		return
	}
	out.tracked = append(out.tracked, pi)
	fp := e.spec.failurePolicy
	if e.spec.indexed && !pi.validIndex {
		// Never newly finished. One recorded as failed while its index was valid
		// stays a failure, unless its state now says it is none (see ledger).
		if pi.inUncountedFailed && notFailureNow(fp, pi) {
			out.unfailed++
		}
		return
	}
	switch {
	case pi.succeeded && !pi.inUncountedSucceeded:
		out.newSucceeded = append(out.newSucceeded, pi)
		if pi.inUncountedFailed {
			out.unfailed++ // recorded as failed, succeeded before its finalizer went
		}
	case pi.failed && !pi.inUncountedFailed:
		out.newFailed = append(out.newFailed, pi)
		if fp == nil || policyMatch(fp, pi).CountsTowardBackoff {
			out.newFailedCounted++
		}
	case pi.failed && fp != nil && !policyMatch(fp, pi).CountsTowardBackoff:
		out.unfailed++ // recorded as failed while running, then stopped with an ignored failure
	}
}

// classify completes what the pass collected (claimed.cl) with the counts once
// every finished pod is counted. st is the status being built; classify only
// reads it.
func classify(e *env, c claimed, st *batchv1.JobStatus) classified {
	out := c.cl
	out.pods = c.infos
	out.restarts = c.restarts
	out.succeeded = sat(int64(st.Succeeded) + int64(len(out.newSucceeded)) + int64(e.uncountedSucceeded.Len()))
	out.failed = sat(int64(st.Failed) + int64(out.newFailedCounted) + int64(e.uncountedFailed.Len()) - int64(out.unfailed))
	return out
}

// notFailureNow says whether pi, a pod recorded in uncountedTerminatedPods.failed,
// is no failure by its state now: it succeeded, or it was stopped with a failure an
// Ignore rule matches. The ledger takes such a pod out of the list.
func notFailureNow(fp *batchv1.PodFailurePolicy, pi *podInfo) bool {
	return pi.succeeded ||
		(pi.failed && fp != nil && !policyMatch(fp, pi).CountsTowardBackoff)
}

// rebuildBackoff is the backoff record to keep: the caller's, advanced by the new
// finishes, merged with one rebuilt from the pods (backoff.FromPodsFunc, from the
// facts: the latest success and the failures the pass collected, see classified)
// so that a restart does not forget earlier failures.
func rebuildBackoff(cl classified, prev plainbackoff.Record) plainbackoff.Record {
	finished := func(pods []*podInfo) func(int) (time.Time, bool) {
		return func(i int) (time.Time, bool) { return pods[i].finish, true }
	}
	advanced := plainbackoff.AdvanceFunc(prev, len(cl.newSucceeded), finished(cl.newSucceeded), len(cl.newFailed), finished(cl.newFailed))
	nSucceeded := 0
	if cl.anySuccess {
		nSucceeded = 1 // the latest success is all AdvanceFunc reads of them
	}
	rebuilt := plainbackoff.AdvanceFunc(plainbackoff.Record{},
		nSucceeded, func(int) (time.Time, bool) { return cl.lastSuccess, true },
		len(cl.backoffFailed), finished(cl.backoffFailed))
	return plainbackoff.Merge(advanced, rebuilt)
}

func sat(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}
