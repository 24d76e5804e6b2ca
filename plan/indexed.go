package plan

import (
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/successpolicy"
)

// indexOutcomes is the outcome of decideIndexed. For a NonIndexed Job only
// succeededCount is set (classified.succeeded).
type indexOutcomes struct {
	// prevSucceeded and prevFailed are the indexes of the status as read.
	prevSucceeded, prevFailed plainindexes.Intervals
	// succeeded and failed are the indexes once the pods of this sync are counted.
	succeeded, failed plainindexes.Intervals
	// succeededCount is the number of succeeded pods (Indexed: indexes) for
	// wantActive and the completion check.
	succeededCount int32
	// verdict is the Job's failure by its indexes or success by its success policy,
	// or nil; it is set only when decideIndexed was given no verdict.
	verdict *verdict
	// frozen: the status could not hold the indexes of this sync's finished pods
	// (MaxObjectBytes): succeeded and failed are the status's, and no pod is
	// recorded as a succeeded index.
	frozen bool
	// delayed holds, per index, the failed pod whose replacement is due
	// (backoffLimitPerIndex only).
	delayed  map[int]*podInfo
	warnings warnings
}

// decideIndexed computes succeeded and failed indexes, the per-index verdicts and the
// success policy. v is the verdict decided so far; st is only read.
func decideIndexed(e *env, cl classified, st *batchv1.JobStatus, v *verdict) indexOutcomes {
	var out indexOutcomes
	sp := e.spec
	completions := int(*sp.completions)
	prev := statusOutcomes(&out.warnings, sp, st)
	out.prevSucceeded, out.prevFailed = prev.Succeeded, prev.Failed
	// An index is finished by its first outcome (plainindexes.Outcomes): two pods of
	// one index (after a creation hidden from the controller) must not make it both
	// succeeded and failed, which the API server refuses. Seen together, the success
	// wins.
	ix := make([]int, 0, len(cl.newSucceeded))
	for _, pi := range cl.tracked {
		if pi.validIndex && pi.succeeded {
			ix = append(ix, pi.index)
		}
	}
	outcomes := plainindexes.Outcomes{Succeeded: out.prevSucceeded, Failed: out.prevFailed}.WithSucceeded(completions, ix)
	out.succeeded = outcomes.Succeeded
	out.succeededCount = int32(out.succeeded.Count())

	decided := func() bool { return v != nil || out.verdict != nil }
	if sp.perIndex != nil {
		var failedIx []int
		for _, pi := range cl.tracked {
			// Pods of a succeeded index are not matched against the policy:
			// WithFailed would leave them out anyway.
			if pi.validIndex && !out.succeeded.Has(pi.index) && indexFailed(e, pi) {
				failedIx = append(failedIx, pi.index)
			}
		}
		out.failed = outcomes.WithFailed(completions, failedIx).Failed
		if !decided() {
			nFailed := out.failed.Count()
			if sp.maxFailedIndexes != nil && nFailed > int(*sp.maxFailedIndexes) {
				out.verdict = &verdict{reason: batchv1.JobReasonMaxFailedIndexesExceeded, message: message(e.owner, msgMaxFailedIndexesExceeded)}
			} else if nFailed > 0 && nFailed+int(out.succeededCount) >= completions {
				out.verdict = &verdict{reason: batchv1.JobReasonFailedIndexes, message: message(e.owner, msgFailedIndexes)}
			}
		}
		out.delayed = findDelayed(e.owner, &cl, out.succeeded, out.failed)
	}
	if n := intervalsBytes(out.succeeded) + intervalsBytes(out.failed); n > checkIndexBytes {
		if room := statusRoom(e.wl); n > room {
			// A status the API server would refuse on every retry: keep the one
			// stored and fail the owner, saying why.
			out.succeeded, out.failed, out.frozen = out.prevSucceeded, out.prevFailed, true
			out.succeededCount = int32(out.succeeded.Count())
			if !decided() || (out.verdict != nil && out.verdict.success) {
				out.verdict = &verdict{reason: reasonStatusTooLarge, message: fmt.Sprintf(msgStatusTooLarge, e.owner.Kind, n, max(room, 0), MaxObjectBytes)}
			}
		}
	}
	if !decided() && sp.successPolicy != nil {
		compiled, err := successpolicy.Compile(sp.successPolicy, completions)
		if err != nil {
			out.warnings.addf("%v", err)
		}
		if res := compiled.Match(out.succeeded); res.Matched {
			out.verdict = &verdict{success: true, reason: res.Reason, message: res.Message}
		}
	}
	return out
}

// statusOutcomes reads the finished indexes st holds: completedIndexes, and
// failedIndexes under backoffLimitPerIndex. Bad parts are reported to w, the valid
// ones kept.
func statusOutcomes(w *warnings, sp spec, st *batchv1.JobStatus) plainindexes.Outcomes {
	completions := int(*sp.completions)
	var out plainindexes.Outcomes
	var err error
	out.Succeeded, err = plainindexes.Parse(st.CompletedIndexes, completions)
	warnIndexes(w, "status.completedIndexes", err)
	if sp.perIndex != nil && st.FailedIndexes != nil {
		out.Failed, err = plainindexes.Parse(*st.FailedIndexes, completions)
		warnIndexes(w, "status.failedIndexes", err)
	}
	return out
}

// warnIndexes reports the bad parts of an index string, except indexes at or above
// completions, which an elastic scale-down leaves behind (they are trimmed).
func warnIndexes(w *warnings, field string, err error) {
	var perr *plainindexes.ParseError
	if err == nil || !errors.As(err, &perr) {
		return
	}
	var real []plainindexes.PartError
	for _, p := range perr.Parts {
		if !errors.Is(p, plainindexes.ErrOutOfRange) {
			real = append(real, p)
		}
	}
	if len(real) > 0 {
		w.addf("%s: %v", field, &plainindexes.ParseError{Input: perr.Input, Parts: real})
	}
}

// indexFailed says whether a failed pod fails its index (plainindexes.IndexFailed).
func indexFailed(e *env, pi *podInfo) bool {
	sp := e.spec
	if !pi.failed {
		return false
	}
	f := plainindexes.IndexFailure{BackoffLimitPerIndex: *sp.perIndex}
	if sp.failurePolicy != nil {
		m := policyMatch(sp.failurePolicy, pi)
		f.FailIndex = m.Matched && m.Action == batchv1.PodFailurePolicyActionFailIndex
		f.Ignored = !m.CountsTowardBackoff
	}
	if !f.FailIndex && !f.Ignored {
		f.Count, _ = indexes.PodFailureCount(e.owner, pi.pod)
	}
	return plainindexes.IndexFailed(f)
}

// findDelayed picks, per index, the failed pod that keeps its finalizer until its
// replacement exists, so that the replacement inherits its failure count.
func findDelayed(kind owner.Kind, cl *classified, succeeded, failed plainindexes.Intervals) map[int]*podInfo {
	activeIx := sets.New[int]()
	for _, pi := range cl.active {
		if pi.index >= 0 {
			activeIx.Insert(pi.index)
		}
	}
	delayed := map[int]*podInfo{}
	for _, pi := range cl.tracked {
		if !pi.validIndex || !pi.failed {
			continue
		}
		ix := pi.index
		if succeeded.Has(ix) || failed.Has(ix) || activeIx.Has(ix) {
			continue
		}
		prev, ok := delayed[ix]
		if !ok || backoff.LaterFailure(kind, pi.pod, prev.pod) {
			delayed[ix] = pi
		}
	}
	return delayed
}

// IndexOutcomes returns the finished indexes of w, an Indexed owner of kind (the
// zero Kind means owner.BatchJob), with pods counted: the indexes its status holds
// (status.completedIndexes, and status.failedIndexes under backoffLimitPerIndex) and
// those of its pods that have finished since, by the rule Compute writes the two
// fields with. A pod counts when it is w's (controller reference with w's UID, or an
// orphan Compute would adopt), carries kind's tracking finalizer (one without it was
// counted when the finalizer went), has an index below completions, and has
// succeeded, or has failed its index (backoffLimitPerIndex used up, or a FailIndex
// rule of the pod failure policy). An index is finished by its first outcome: seen
// together, a success wins. A finished owner counts nothing more: its status is the
// answer. Failed is empty unless backoffLimitPerIndex is set, as upstream.
//
// The strings are bad data worked around (an unparsable status string keeps its
// valid part, a pod with a bad index annotation is left out), as in
// Plan.Warnings. The error wraps ErrInvalidJob when w is not an Indexed owner
// Compute could plan. Pure: neither w nor the pods are modified.
func (w *Workload) IndexOutcomes(kind owner.Kind, pods []*corev1.Pod) (plainindexes.Outcomes, []string, error) {
	in := Input{Workload: w, Pods: pods, Owner: kind, ExpectationsSatisfied: true}
	if w == nil {
		_, err := in.workload()
		return plainindexes.Outcomes{}, nil, err
	}
	sp, err := readSpec(&w.Spec)
	if err != nil {
		return plainindexes.Outcomes{}, nil, err
	}
	if !sp.indexed {
		return plainindexes.Outcomes{}, nil, fmt.Errorf("%w: spec.completionMode: %q: index outcomes need an Indexed owner", ErrInvalidJob, ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion))
	}
	if _, done := jobstatus.Finished(&w.Status); done {
		var warn warnings
		out := statusOutcomes(&warn, sp, &w.Status)
		return out, warn, nil
	}
	e, claimed, st, cl := begin(in, w, sp)
	ix := decideIndexed(e, cl, st, nil)
	warn := append(claimed.warnings, ix.warnings...)
	return plainindexes.Outcomes{Succeeded: ix.succeeded, Failed: ix.failed}, warn, nil
}
