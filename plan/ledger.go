package plan

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/owner"
	plainledger "github.com/jobkit/jobkit/plain/ledger"
)

// ledgerInput is what ledger reads beyond the env.
type ledgerInput struct {
	cl        *classified // the pods, as the pass classified them
	indexes   indexOutcomes
	deletions []Deletion
	verdict   *verdict
}

// ledgered is the outcome of ledger.
type ledgered struct {
	removeFinalizers     []PodAction
	failurePolicyActions map[batchv1.PodFailurePolicyAction]int
	// limitReached: the ledger is full (MaxUncounted), some finished pod waits.
	limitReached bool
	warnings     warnings
}

// ledger decides which finished pods are recorded and which finalizers are removed.
// It MUTATES st: it settles and records uncountedTerminatedPods and, for an Indexed
// Job, sets completedIndexes, succeeded and failedIndexes.
func ledger(e *env, in ledgerInput, st *batchv1.JobStatus) ledgered {
	var out ledgered
	// Count first what no longer carries the finalizer: it frees room in the ledger.
	// Of the pods that carry the finalizer, only those in the ledger matter.
	settled, err := finalizers.Settle(e.owner.Finalizer, st.UncountedTerminatedPods, in.cl.inLedger, e.pending)
	if err != nil {
		out.warnings.addf("%v", err)
	}
	settled.ApplyTo(st)

	deleting := e.wl.Deleting
	v := in.verdict
	failing := v != nil && !v.success
	// A pod deleted with its finalizer removed first (scale-down, suspend) gets that
	// one patch only, even when the Job finishes in the same sync.
	var patchedByDelete map[*corev1.Pod]bool
	for _, d := range in.deletions {
		if d.RemoveFinalizerFirst {
			if patchedByDelete == nil {
				patchedByDelete = map[*corev1.Pod]bool{}
			}
			patchedByDelete[d.Pod] = true
		}
	}
	var finished []finalizers.FinishedPod
	var unrecord []types.UID
	for _, pi := range in.cl.tracked {
		if patchedByDelete[pi.pod] {
			continue
		}
		pod := pi.pod
		succeeded := pi.succeeded
		if !(deleting || v != nil || succeeded) {
			if !pi.failed {
				continue
			}
			if d, ok := in.indexes.delayed[pi.index]; ok && d == pi {
				continue // keeps its finalizer until its replacement exists
			}
		}
		fp := finalizers.FinishedPod{Pod: pod, Outcome: plainledger.NotCounted}
		ignored := false
		switch {
		case succeeded:
			if !e.spec.indexed {
				fp.Outcome = plainledger.Succeeded
			} else if pi.validIndex && !in.indexes.frozen && !in.indexes.prevSucceeded.Has(pi.index) && !in.indexes.prevFailed.Has(pi.index) {
				fp.Outcome, fp.Index = plainledger.SucceededIndex, pi.index
			}
		case pi.failed || failing:
			if e.spec.indexed && !pi.validIndex {
				// Not recorded now. One recorded while its index was valid stays a
				// failure (as upstream), as long as its state says it is one.
				ignored = pi.inUncountedFailed && notFailureNow(e.spec.failurePolicy, pi)
				break
			}
			if e.spec.failurePolicy != nil {
				m := policyMatch(e.spec.failurePolicy, pi)
				if m.Matched && !pi.inUncountedFailed {
					if out.failurePolicyActions == nil {
						out.failurePolicyActions = map[batchv1.PodFailurePolicyAction]int{}
					}
					out.failurePolicyActions[m.Action]++
				}
				if !m.CountsTowardBackoff {
					ignored = true
					break
				}
			}
			fp.Outcome = plainledger.Failed
		}
		if (succeeded || ignored) && pi.inUncountedFailed {
			// A pod counts by its state when its finalizer goes (the removal patch
			// carries its resourceVersion, so that is the state decided on here). One
			// recorded as failed whose removal did not happen, and which has since
			// succeeded or been stopped with an ignored failure, is recorded again:
			// it still carries the finalizer, so it was never counted. The same holds
			// when an elastic scale-down has since taken its index away (issue 25); a
			// recorded failure of such an index that is still a failure stays one, as
			// upstream.
			unrecord = append(unrecord, pod.UID)
		}
		finished = append(finished, fp)
	}
	if deferRecording(e, st, v, len(finished)) {
		finished, unrecord = nil, nil
	}
	if len(unrecord) > 0 {
		u := st.UncountedTerminatedPods.DeepCopy()
		drop := sets.New(unrecord...)
		u.Failed = slices.DeleteFunc(u.Failed, drop.Has)
		st.UncountedTerminatedPods = u
	}
	rec, err := finalizers.Record(e.owner.Finalizer, st.UncountedTerminatedPods, finished, e.pending, e.opts.maxUncounted())
	if err != nil {
		out.warnings.addf("%v", err)
	}
	out.limitReached = rec.LimitReached
	st.UncountedTerminatedPods = &rec.Uncounted
	for _, pod := range rec.RemoveFinalizer {
		out.removeFinalizers = append(out.removeFinalizers, PodAction{Pod: pod, Reason: finalizerReason(e.owner, pod, deleting, v)})
	}
	if e.spec.indexed {
		succeededIx := in.indexes.succeeded.WithSorted(rec.NewSucceededIndexes)
		st.CompletedIndexes = succeededIx.String()
		st.Succeeded = int32(succeededIx.Count())
		if old := e.wl.Status.Succeeded; st.Succeeded < old && !elastic(&e.wl.Spec) {
			// Only an elastic Job (completions == parallelism) may lose succeeded
			// indexes, to a scale-down; the API server refuses to lower the counter
			// of any other, and would refuse every status write of the Job. Fewer
			// indexes here means the status held indexes at or above completions
			// (damaged data, dropped as for an elastic Job): keep the counter.
			st.Succeeded = old
		}
		if e.spec.perIndex != nil {
			st.FailedIndexes = ptr.To(in.indexes.failed.String())
		} else {
			st.FailedIndexes = nil
		}
	}
	return out
}

// deferRecording reports whether the n newly finished pods wait for a later sync:
// while pods that earlier syncs created or deleted are not in the cache yet
// (expectations unsatisfied), their events are on the way, and recording what has
// finished now and the rest a few moments later would cost two more status writes per
// batch. They are recorded now all the same when the Job is finishing or being
// deleted, or when they fill the ledger (MaxUncounted). Upstream records them in
// every sync; with an informer lagging by a few round trips, that is one or two
// extra status writes for each batch of creations.
func deferRecording(e *env, st *batchv1.JobStatus, v *verdict, n int) bool {
	if n == 0 || e.synced || v != nil || e.wl.Deleting {
		return false
	}
	u := st.UncountedTerminatedPods
	if u != nil {
		n += len(u.Succeeded) + len(u.Failed)
	}
	return n < e.opts.maxUncounted()
}

func finalizerReason(kind owner.Kind, pod *corev1.Pod, deleting bool, v *verdict) string {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return "pod succeeded"
	case pod.Status.Phase == corev1.PodFailed:
		return "pod failed"
	case pod.DeletionTimestamp != nil:
		return "pod deleted"
	case deleting:
		return noun(kind) + " being deleted"
	case v != nil:
		return noun(kind) + " finishing: " + v.reason
	}
	return "pod finished"
}

// elastic reports whether s is that of an Indexed Job whose completions may change
// with its parallelism (the API requires completions == parallelism for that).
func elastic(s *Spec) bool {
	c, p := s.Completions, s.Parallelism
	return c != nil && p != nil && *c == *p
}
