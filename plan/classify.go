package plan

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/internal/podutil"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/podfailurepolicy"
)

// podInfo caches what the plan needs to know of one pod. classify fills it in; later
// phases only read it, except for the memo of policyMatch.
type podInfo struct {
	pod         *corev1.Pod
	index       int  // completion index; plainindexes.Unknown when none or NonIndexed
	validIndex  bool // Indexed and 0 <= index < completions
	tracked     bool // carries the finalizer and its removal is not pending
	active      bool
	terminating bool
	ready       bool
	failed      bool // counts as failed (phase Failed, or deleted unless policy Failed)
	matched     bool // policy already matched
	match       podfailurepolicy.Result
}

// policyMatch matches the pod failure policy fp once per pod: the result is kept in
// pi (the only field of a podInfo written after classify).
func policyMatch(fp *batchv1.PodFailurePolicy, pi *podInfo) podfailurepolicy.Result {
	if !pi.matched {
		pi.match = podfailurepolicy.Match(fp, pi.pod)
		pi.matched = true
	}
	return pi.match
}

// podCounts are the Job's pods by state, for status.active, ready and terminating.
// They are derived once from the pods (classify) and once more from the plan's
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

// classified is the outcome of classify.
type classified struct {
	pods []*podInfo    // the Job's pods, in the order of list
	list []*corev1.Pod // the Job's pods (claimed.pods)
	// uncountedSucceeded and uncountedFailed are the UIDs of the status's
	// uncountedTerminatedPods.
	uncountedSucceeded, uncountedFailed sets.Set[types.UID]
	// newSucceeded and newFailed are the finished pods with the finalizer that the
	// ledger does not list yet.
	newSucceeded, newFailed []*corev1.Pod
	// succeeded and failed are the counts once every finished pod is counted
	// (failed: those that count toward backoffLimit).
	succeeded, failed int32
	observed          podCounts
	warnings          warnings
}

// classify sorts the pods by state, counts them and finds the newly finished ones.
// st is the status being built; classify only reads it.
func classify(e *env, list []*corev1.Pod, st *batchv1.JobStatus) classified {
	out := classified{list: list}
	out.uncountedSucceeded = sets.New(st.UncountedTerminatedPods.Succeeded...)
	out.uncountedFailed = sets.New(st.UncountedTerminatedPods.Failed...)
	// One allocation for every podInfo; the capacity is never exceeded, so the
	// pointers into it stay valid.
	infos := make([]podInfo, len(list))
	out.pods = make([]*podInfo, len(list))
	completions := int(deref(e.spec.completions))
	badIndexes := 0
	unfailed := 0 // pods in uncountedFailed whose state now says they are not failures
	var newFailedCounted int32
	c := &out.observed
	for i, pod := range list {
		pi := &infos[i]
		out.pods[i] = pi
		pi.pod = pod
		pi.index = plainindexes.Unknown
		if e.spec.indexed {
			ix, err := indexes.PodIndex(e.owner, pod)
			if err == nil {
				pi.index = ix
				pi.validIndex = ix < completions
			} else if badIndexes < 5 {
				badIndexes++
				out.warnings.addf("%v", err)
			}
		}
		pi.tracked = e.owner.HasFinalizer(pod) && !e.pending.Has(pod.UID)
		terminal := isTerminal(pod)
		pi.active = !terminal && pod.DeletionTimestamp == nil
		pi.terminating = !terminal && pod.DeletionTimestamp != nil
		pi.ready = pi.active && podutil.IsReady(pod)
		pi.failed = pod.Status.Phase == corev1.PodFailed ||
			(!e.spec.onlyFailed && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded)
		if pi.active {
			c.active++
			if pi.ready {
				c.ready++
			}
		}
		if pi.terminating {
			c.terminating++
		}
		if !pi.tracked {
			continue
		}
		fp := e.spec.failurePolicy
		if e.spec.indexed && !pi.validIndex {
			// Never newly finished. One recorded as failed while its index was valid
			// stays a failure, unless its state now says it is none (see ledger).
			if out.uncountedFailed.Has(pod.UID) && notFailureNow(fp, pi) {
				unfailed++
			}
			continue
		}
		switch {
		case pod.Status.Phase == corev1.PodSucceeded && !out.uncountedSucceeded.Has(pod.UID):
			out.newSucceeded = append(out.newSucceeded, pod)
			if out.uncountedFailed.Has(pod.UID) {
				unfailed++ // recorded as failed, succeeded before its finalizer went
			}
		case pi.failed && !out.uncountedFailed.Has(pod.UID):
			out.newFailed = append(out.newFailed, pod)
			if fp == nil || policyMatch(fp, pi).CountsTowardBackoff {
				newFailedCounted++
			}
		case pi.failed && fp != nil && !policyMatch(fp, pi).CountsTowardBackoff:
			unfailed++ // recorded as failed while running, then stopped with an ignored failure
		}
	}
	out.succeeded = sat(int64(st.Succeeded) + int64(len(out.newSucceeded)) + int64(out.uncountedSucceeded.Len()))
	out.failed = sat(int64(st.Failed) + int64(newFailedCounted) + int64(out.uncountedFailed.Len()) - int64(unfailed))
	return out
}

// notFailureNow says whether pi, a pod recorded in uncountedTerminatedPods.failed,
// is no failure by its state now: it succeeded, or it was stopped with a failure an
// Ignore rule matches. The ledger takes such a pod out of the list.
func notFailureNow(fp *batchv1.PodFailurePolicy, pi *podInfo) bool {
	return pi.pod.Status.Phase == corev1.PodSucceeded ||
		(pi.failed && fp != nil && !policyMatch(fp, pi).CountsTowardBackoff)
}

// rebuildBackoff is the backoff record to keep: the caller's, advanced by the new
// finishes, merged with one rebuilt from the pods so that a restart does not forget
// earlier failures.
func rebuildBackoff(e *env, cl classified, prev plainbackoff.Record) plainbackoff.Record {
	isFailed := func(p *corev1.Pod) bool {
		if p.DeletionTimestamp != nil && !e.owner.HasFinalizer(p) {
			// Mostly pods this controller stopped (scale-down, suspend, a finishing
			// Job), which are no failures: a resumed Job must not wait out a backoff
			// for them. A counted failure deleted by someone else is left out too;
			// it leaves the API at the end of its grace period anyway.
			return false
		}
		return p.Status.Phase == corev1.PodFailed || (!e.spec.onlyFailed && p.DeletionTimestamp != nil)
	}
	rebuildFrom := cl.list
	if e.spec.indexed {
		// Pods without a valid index are strays; they do not tell the Job's history.
		rebuildFrom = make([]*corev1.Pod, 0, len(cl.pods))
		for _, pi := range cl.pods {
			if pi.validIndex {
				rebuildFrom = append(rebuildFrom, pi.pod)
			}
		}
	}
	return plainbackoff.Merge(backoff.AdvancePods(prev, cl.newSucceeded, cl.newFailed), backoff.FromPodsFunc(rebuildFrom, isFailed))
}

func sat(v int64) int32 {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}
