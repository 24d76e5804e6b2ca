package explain

import (
	"fmt"
	"maps"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
)

// limits says where the owner stands against each limit of its spec, with the
// numbers behind the plan's decisions: the failures counted against
// backoffLimit (once there are any), the failures of each index against backoffLimitPerIndex, the
// failed indexes against maxFailedIndexes, the time left of
// activeDeadlineSeconds, and the pod failure backoff in force.
func limits(w *workload, c *classification, p *plan.Plan, opts Options) []string {
	var out []string
	st := &p.Status
	perIndex := w.Spec.BackoffLimitPerIndex != nil
	if !perIndex && st.Failed > 0 {
		limit := ptr.Deref(w.Spec.BackoffLimit, 6)
		s := fmt.Sprintf("backoffLimit: %d of %d failure(s) used", st.Failed, limit)
		if st.Failed > limit {
			s = fmt.Sprintf("backoffLimit: %d failure(s), over the limit of %d", st.Failed, limit)
			// Pods removed for another reason (a deadline, a FailJob rule) count as
			// failures too: the count then passes the limit without being the reason.
			if reason := failureReason(st); reason != "" && reason != batchv1.JobReasonBackoffLimitExceeded {
				s = fmt.Sprintf("backoffLimit: %d failure(s) counted against the limit of %d, but the Job fails by %s", st.Failed, limit, reason)
			}
		}
		if w.Spec.BackoffLimit == nil {
			s += " (unset: the API's default 6)"
		}
		out = append(out, s)
	} else if perIndex {
		out = append(out, perIndexLimits(w, c, p)...)
	}
	if d := w.Spec.ActiveDeadlineSeconds; d != nil {
		deadline := time.Duration(*d) * time.Second
		switch {
		case st.StartTime == nil:
			out = append(out, fmt.Sprintf("activeDeadlineSeconds %d: not started (no status.startTime), the clock has not begun", *d))
		default:
			left := st.StartTime.Add(deadline).Sub(opts.Now)
			if left > 0 {
				out = append(out, fmt.Sprintf("activeDeadlineSeconds %d: %s left (started %s)", *d, left.Round(time.Second), st.StartTime.UTC().Format(time.RFC3339)))
			} else if _, finished := jobstatus.Finished(&w.Status); !finished {
				out = append(out, fmt.Sprintf("activeDeadlineSeconds %d: exceeded %s ago (started %s)", *d, (-left).Round(time.Second), st.StartTime.UTC().Format(time.RFC3339)))
			}
		}
	}
	if st.Failed > 0 || len(c.failedIndexes) > 0 {
		out = append(out, fmt.Sprintf("pod failure backoff: %s after the first failure, doubling, at most %s", opts.Backoff.Delay(1), opts.Backoff.Delay(64)))
	}
	return out
}

// perIndexLimits says, for each index with failures, how many against
// backoffLimitPerIndex, and the failed indexes against maxFailedIndexes.
func perIndexLimits(w *workload, c *classification, p *plan.Plan) []string {
	limit := *w.Spec.BackoffLimitPerIndex
	var out []string
	for _, ix := range slices.Sorted(maps.Keys(c.failedIndexes)) {
		n := c.failedIndexes[ix]
		s := fmt.Sprintf("index %d: %d failure(s), backoffLimitPerIndex %d", ix, n, limit)
		if n > limit {
			s += ": failed for good"
		} else {
			s += fmt.Sprintf(": %d more allowed", limit-n)
		}
		out = append(out, s)
	}
	if m := w.Spec.MaxFailedIndexes; m != nil {
		failed := 0
		if f := p.Status.FailedIndexes; f != nil && w.Spec.Completions != nil {
			if set, err := plainindexes.Parse(*f, int(*w.Spec.Completions)); err == nil {
				failed = set.Count()
			}
		}
		out = append(out, fmt.Sprintf("maxFailedIndexes: %d of %d failed index(es)", failed, *m))
	}
	return out
}

// countIndexFailures fills c.failedIndexes: for each index of an Indexed owner,
// the failures its pods record (the failure count annotation of its latest pod,
// plus that pod's own failure).
func countIndexFailures(w *workload, c *classification) {
	c.failedIndexes = map[int]int32{}
	if ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
		return
	}
	for _, pod := range c.own {
		ix, err := indexes.PodIndex(w.kind, pod)
		if err != nil {
			continue
		}
		fc, _ := indexes.PodFailureCount(w.kind, pod)
		n := fc.Failed
		if pod.Status.Phase == corev1.PodFailed {
			n++
		}
		if n > c.failedIndexes[ix] {
			c.failedIndexes[ix] = n
		}
	}
	for ix, n := range c.failedIndexes {
		if n == 0 {
			delete(c.failedIndexes, ix)
		}
	}
}

// failureReason is the reason of the Failed or FailureTarget condition that is True
// in st, "" when there is none.
func failureReason(st *batchv1.JobStatus) string {
	for _, c := range st.Conditions {
		if (c.Type == batchv1.JobFailed || c.Type == batchv1.JobFailureTarget) && c.Status == corev1.ConditionTrue {
			return c.Reason
		}
	}
	return ""
}
