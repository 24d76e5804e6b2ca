package explain

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/podfailurepolicy"
	"github.com/jobkit/jobkit/successpolicy"
)

// diagnose lists what looks wrong in the Job and its pods, independent of what the
// plan does about it. With assumed outcomes the counters are not compared with the
// pods: they disagree by design.
func diagnose(job *batchv1.Job, pods []*corev1.Pod, c *classification, p *plan.Plan, controller string, assumed bool) []Diagnostic {
	var out []Diagnostic
	add := func(kind, format string, args ...any) {
		out = append(out, Diagnostic{Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	// Tracking finalizers that no sync of this Job will count.
	finished, isFinished := jobstatus.Finished(&job.Status)
	removed := actionSet(p.RemoveFinalizers)
	for _, pod := range pods {
		if pod == nil || pod.Namespace != job.Namespace || !finalizers.Has(pod) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref != nil && ref.UID == job.UID && isFinished:
			add(DiagFinalizerAfterFinish, "pod %s keeps the tracking finalizer after the Job finished (%s)%s", pod.Name, finished, removedBy(removed, pod))
		case ref != nil && ref.UID == job.UID && job.DeletionTimestamp != nil:
			add(DiagFinalizerJobDeleted, "pod %s keeps the tracking finalizer while the Job is being deleted%s", pod.Name, removedBy(removed, pod))
		case ref != nil && ref.UID != job.UID && owner.BatchJob.Matches(ref) && ref.Name == job.Name:
			// A pod of an earlier Job of this name: that Job is gone.
			if d := finalizers.DecideOrphan(pod, job, controller); d.Remove {
				add(DiagFinalizerJobDeleted, "pod %s keeps the tracking finalizer of a deleted Job %s (uid %s): %s; the orphan cleanup of the Job controller removes it", pod.Name, ref.Name, ref.UID, d.Reason)
			}
		}
	}
	// The status as it stands, and the writes the plan would make.
	for _, e := range jobstatus.Validate(job) {
		add(DiagInvalidStatus, "the current status breaks a rule of the API server: %s", e.Error())
	}
	if p.Skip == "" {
		before := job
		if p.RecordStatus != nil {
			rec := withStatus(job, p.RecordStatus)
			for _, e := range jobstatus.ValidateUpdate(job, rec) {
				add(DiagRefusedWrite, "the API server would refuse the first status write (uncounted pods): %s", e.Error())
			}
			before = rec
		}
		if p.StatusChanged {
			for _, e := range jobstatus.ValidateUpdate(before, withStatus(job, &p.Status)) {
				add(DiagRefusedWrite, "the API server would refuse the status write: %s", e.Error())
			}
		}
	}
	if !assumed {
		out = append(out, counterMismatches(job, c)...)
	}
	for _, e := range podfailurepolicy.Validate(&job.Spec, nil) {
		add(DiagInvalidFailurePolicy, "%s", e.Error())
	}
	for _, e := range successpolicy.Validate(&job.Spec, nil) {
		add(DiagInvalidSuccessPolicy, "%s", e.Error())
	}
	if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
		for _, pod := range c.own {
			if _, err := indexes.PodIndex(pod); err != nil {
				add(DiagBadIndex, "%v: the pod is a stray, never counted for an index", err)
			}
			if job.Spec.BackoffLimitPerIndex != nil {
				if _, err := indexes.PodFailureCount(pod); err != nil {
					add(DiagBadIndex, "%v: counted as 0", err)
				}
			}
		}
	}
	return out
}

func removedBy(removed map[*corev1.Pod]bool, pod *corev1.Pod) string {
	if removed[pod] {
		return "; this sync removes it"
	}
	return ""
}

func withStatus(job *batchv1.Job, st *batchv1.JobStatus) *batchv1.Job {
	out := job.DeepCopy()
	out.Status = *st.DeepCopy()
	return out
}

// counterMismatches compares the status counters with the pods. active, ready and
// terminating must equal the pods' (they lag by one sync at most); succeeded and
// failed must count at least the finished pods that no longer carry the tracking
// finalizer, since a finalizer is only removed once its pod is recorded.
func counterMismatches(job *batchv1.Job, c *classification) []Diagnostic {
	var out []Diagnostic
	st := &job.Status
	if jobstatus.IsFinished(st) {
		return nil
	}
	mismatch := func(field string, status int32, pods int, what string) {
		out = append(out, Diagnostic{Kind: DiagCounterMismatch,
			Message: fmt.Sprintf("%s is %d but %d pod(s) are %s", field, status, pods, what)})
	}
	if int(st.Active) != c.owned[ClassActive] {
		mismatch("status.active", st.Active, c.owned[ClassActive], "active")
	}
	if st.Ready != nil && int(*st.Ready) != c.owned[ClassReady] {
		mismatch("status.ready", *st.Ready, c.owned[ClassReady], "ready")
	}
	if st.Terminating != nil && int(*st.Terminating) != c.owned[ClassTerminating] {
		mismatch("status.terminating", *st.Terminating, c.owned[ClassTerminating], "terminating")
	}
	indexed := ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	var succeeded, failed int
	var missing []int
	var completed indexes.Intervals
	completions := int(ptr.Deref(job.Spec.Completions, 0))
	if indexed {
		completed, _ = indexes.Parse(st.CompletedIndexes, completions)
	}
	for _, pod := range c.own {
		if finalizers.Has(pod) || metav1.GetControllerOfNoCopy(pod) == nil {
			continue
		}
		switch {
		case pod.Status.Phase == corev1.PodSucceeded:
			succeeded++
			if indexed {
				if ix, err := indexes.PodIndex(pod); err == nil && ix < completions && !completed.Has(ix) {
					missing = append(missing, ix)
				}
			}
		case pod.Status.Phase == corev1.PodFailed && pod.DeletionTimestamp == nil:
			// Pods the controller deleted had their finalizer removed first and are
			// not failures; neither are failures an Ignore rule matches.
			if podfailurepolicy.Match(job.Spec.PodFailurePolicy, pod).CountsTowardBackoff {
				failed++
			}
		}
	}
	if !indexed && succeeded > int(st.Succeeded) {
		mismatch("status.succeeded", st.Succeeded, succeeded, "succeeded without the tracking finalizer (so already counted)")
	}
	if len(missing) > 0 {
		out = append(out, Diagnostic{Kind: DiagCounterMismatch, Message: fmt.Sprintf(
			"status.completedIndexes is %q but succeeded pods without the tracking finalizer (so already counted) have indexes %s",
			st.CompletedIndexes, indexes.FromIndexes(missing))})
	}
	if failed > int(st.Failed) {
		mismatch("status.failed", st.Failed, failed, "failed without the tracking finalizer (so already counted)")
	}
	return out
}
