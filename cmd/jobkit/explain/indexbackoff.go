package explain

import (
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/indexes"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// indexBackoff finds the indexes of a Job with backoffLimitPerIndex whose
// replacement waits for the per-index backoff. The plan computes this internally
// but only exposes the earliest wait (RequeueAfter); the rule is the same: the last
// failed pod of an index that is neither finished nor active, with its failure
// count annotations.
func indexBackoff(w *workload, c *classification, p *plan.Plan, opts Options) []IndexWait {
	if w.Spec.BackoffLimitPerIndex == nil || w.Spec.Completions == nil ||
		ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return nil
	}
	completions := int(*w.Spec.Completions)
	done, _ := plainindexes.Parse(p.Status.CompletedIndexes, completions)
	if p.Status.FailedIndexes != nil {
		failed, _ := plainindexes.Parse(*p.Status.FailedIndexes, completions)
		done = done.Union(failed)
	}
	created := map[int]bool{}
	for _, cr := range p.Create {
		created[cr.Index] = true
	}
	busy := map[int]bool{}
	last := map[int]*corev1.Pod{}
	for _, pod := range c.own {
		ix, err := indexes.PodIndex(w.kind, pod)
		if err != nil || ix >= completions || done.Has(ix) {
			continue
		}
		if !isTerminal(pod) && pod.DeletionTimestamp == nil {
			busy[ix] = true
			continue
		}
		if !isFailedForBackoff(pod, c.onlyFailed) {
			continue
		}
		if prev, ok := last[ix]; !ok || backoff.LaterFailure(w.kind, pod, prev) {
			last[ix] = pod
		}
	}
	var out []IndexWait
	for ix, pod := range last {
		if busy[ix] || created[ix] {
			continue
		}
		left, _ := backoff.IndexRemaining(w.kind, pod, opts.Backoff, opts.Now)
		if left <= 0 {
			continue
		}
		fc, _ := indexes.PodFailureCount(w.kind, pod)
		out = append(out, IndexWait{Index: ix, Failures: int(fc.Failed) + int(fc.Ignored) + 1, Remaining: Duration(left)})
	}
	slices.SortFunc(out, func(a, b IndexWait) int {
		if a.Remaining != b.Remaining {
			return int(a.Remaining - b.Remaining)
		}
		return a.Index - b.Index
	})
	return out
}

func isFailedForBackoff(pod *corev1.Pod, onlyFailed bool) bool {
	if pod.Status.Phase == corev1.PodFailed {
		return true
	}
	return !onlyFailed && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded
}
