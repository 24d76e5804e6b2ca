package explain

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plan"
)

// blockers says what keeps the Job from progressing when the plan creates and
// deletes nothing.
func blockers(w *workload, c *classification, p *plan.Plan, r *Report, opts Options) []string {
	if p.Skip != "" {
		if strings.HasPrefix(p.Skip, "spec.managedBy") {
			return []string{fmt.Sprintf("the %s is managed by another controller: %s (explain as that controller with --managed-by=%s)", w.noun, p.Skip, w.controller())}
		}
		if w.finished() {
			return []string{"the " + w.noun + " has finished (" + r.Job.Finished + ") and none of its pods carries the tracking finalizer: nothing is left to do"}
		}
		return []string{p.Skip}
	}
	if len(p.Create) > 0 || len(p.Delete) > 0 {
		return nil
	}
	var out []string
	if w.finished() {
		return []string{"the " + w.noun + " has finished (" + r.Job.Finished + "); only the tracking finalizers of its pods are left to remove"}
	}
	if w.Deleting {
		out = append(out, "the "+w.noun+" is being deleted: the controller only counts its finished pods and removes their finalizers")
	}
	if opts.ExpectationsUnsatisfied {
		out = append(out, "expectations: creations or deletions of this controller are not yet observed in its cache; it creates, deletes and finishes nothing until they are")
	}
	for _, cc := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet} {
		cond := jobstatus.FindCondition(p.Status.Conditions, cc)
		if cond == nil || cond.Status != corev1.ConditionTrue {
			continue
		}
		if _, ok := jobstatus.Finished(&p.Status); ok {
			continue
		}
		var wait []string
		if n := ptr.Deref(p.Status.Terminating, 0); n > 0 {
			wait = append(wait, fmt.Sprintf("%d terminating pod(s) to go", n))
		}
		if u := p.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
			wait = append(wait, fmt.Sprintf("%d uncounted pod(s) to be counted", len(u.Succeeded)+len(u.Failed)))
		}
		if p.Status.Active > 0 {
			wait = append(wait, fmt.Sprintf("%d active pod(s) to be deleted", p.Status.Active))
		}
		if len(wait) == 0 {
			wait = append(wait, "the finalizer removals of this sync to succeed")
		}
		out = append(out, fmt.Sprintf("the %s is finishing (%s, %s); the terminal condition waits for %s", w.noun, cc, cond.Reason, strings.Join(wait, ", ")))
	}
	if len(out) > 0 {
		return out
	}
	if ptr.Deref(w.Spec.Suspend, false) {
		return []string{"the " + w.noun + " is suspended (spec.suspend is true): no pod is created until it is resumed"}
	}
	if r.Requeue != nil && strings.HasPrefix(r.Requeue.Reason, "pod failure backoff") {
		out = append(out, fmt.Sprintf("waiting for the %s: %s left", r.Requeue.Reason, r.Requeue.After))
	}
	want := w.Spec.WantActive(p.Status.Succeeded, p.Status.Active)
	// An index waiting for its backoff is what blocks only while a slot of
	// parallelism is free; else the active pods are.
	if p.Status.Active < want {
		for _, iw := range r.IndexBackoff {
			out = append(out, fmt.Sprintf("waiting for per-index backoff of index %d: %s left", iw.Index, iw.Remaining))
		}
	}
	occupied := p.Status.Active
	if c.onlyFailed && ptr.Deref(p.Status.Terminating, 0) > 0 {
		occupied += ptr.Deref(p.Status.Terminating, 0)
		out = append(out, fmt.Sprintf("waiting for %d terminating pod(s) to finish before replacing them (podReplacementPolicy Failed)", ptr.Deref(p.Status.Terminating, 0)))
	}
	if len(out) > 0 {
		return out
	}
	if occupied >= want && p.Status.Active > 0 {
		return []string{fmt.Sprintf("all %d wanted pod(s) are active (parallelism %d): waiting for them to finish", want, ptr.Deref(w.Spec.Parallelism, 1))}
	}
	if want == 0 && p.Status.Active == 0 {
		return []string{"no pod is wanted (parallelism 0 or every completion reached)"}
	}
	return []string{"nothing blocks progress that the plan can see"}
}
