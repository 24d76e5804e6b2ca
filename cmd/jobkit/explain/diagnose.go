package explain

import (
	"encoding/json"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/jobstatus"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/podfailurepolicy"
	"github.com/jobkit/jobkit/successpolicy"
)

// diagnose lists what looks wrong in the Job and its pods, independent of what the
// plan does about it. With assumed outcomes the counters are not compared with the
// pods: they disagree by design.
func diagnose(w *workload, pods []*corev1.Pod, c *classification, p *plan.Plan, controller string, assumed bool) []Diagnostic {
	var out []Diagnostic
	add := func(kind, format string, args ...any) {
		out = append(out, Diagnostic{Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	// Tracking finalizers that no sync of this Job will count.
	finished, isFinished := jobstatus.Finished(&w.Status)
	removed := actionSet(p.RemoveFinalizers)
	for _, pod := range pods {
		if pod == nil || pod.Namespace != w.Namespace || !w.kind.HasFinalizer(pod) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref != nil && ref.UID == w.UID && isFinished:
			add(DiagFinalizerAfterFinish, "pod %s keeps the tracking finalizer after the %s finished (%s)%s", pod.Name, w.noun, finished, removedBy(removed, pod))
		case ref != nil && ref.UID == w.UID && w.Deleting:
			add(DiagFinalizerJobDeleted, "pod %s keeps the tracking finalizer while the %s is being deleted%s", pod.Name, w.noun, removedBy(removed, pod))
		case ref != nil && ref.UID != w.UID && w.kind.Matches(ref) && ref.Name == w.Name:
			// A pod of an earlier owner of this name: that owner is gone.
			if d := finalizers.DecideOrphan(w.kind, pod, w.orphanOwner(), controller); d.Remove {
				add(DiagFinalizerJobDeleted, "pod %s keeps the tracking finalizer of a deleted %s %s (uid %s): %s; the orphan cleanup of the %s controller removes it", pod.Name, w.noun, ref.Name, ref.UID, d.Message, w.noun)
			}
		}
	}
	// The status as it stands, and the writes the plan would make.
	for _, e := range jobstatus.Validate(w.job) {
		add(DiagInvalidStatus, "the current status breaks a rule of the API server: %s", e.Error())
	}
	if p.Skip == "" {
		before := w.job
		if p.RecordStatus != nil {
			rec := withStatus(w.job, p.RecordStatus)
			for _, e := range jobstatus.ValidateUpdate(w.job, rec) {
				add(DiagRefusedWrite, "the API server would refuse the first status write (uncounted pods): %s", e.Error())
			}
			before = rec
		}
		if p.StatusChanged {
			for _, e := range jobstatus.ValidateUpdate(before, withStatus(w.job, &p.Status)) {
				add(DiagRefusedWrite, "the API server would refuse the status write: %s", e.Error())
			}
		}
	}
	if !assumed {
		out = append(out, counterMismatches(w, c)...)
	}
	for _, e := range podfailurepolicy.Validate(&w.job.Spec, nil) {
		add(DiagInvalidFailurePolicy, "%s", e.Error())
	}
	for _, e := range successpolicy.Validate(&w.job.Spec, nil) {
		add(DiagInvalidSuccessPolicy, "%s", e.Error())
	}
	if ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
		for _, pod := range c.own {
			if _, err := indexes.PodIndex(w.kind, pod); err != nil {
				add(DiagBadIndex, "%v: the pod is a stray, never counted for an index", err)
			}
			if w.Spec.BackoffLimitPerIndex != nil {
				if _, err := indexes.PodFailureCount(w.kind, pod); err != nil {
					add(DiagBadIndex, "%v: counted as 0", err)
				}
			}
		}
	}
	return append(out, objectSize(w)...)
}

// objectSize warns when the object is within 20% of plan.MaxObjectBytes, the
// largest object the API server stores with etcd's default limit, or when its
// status may grow past it (plan.Spec.WorstStatusSize; Compute fails such an owner
// with StatusTooLarge once its status would not fit).
func objectSize(w *workload) []Diagnostic {
	var obj any = w.job
	if w.Object != nil {
		obj = w.Object
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	var out []Diagnostic
	size, limit := len(b), plan.MaxObjectBytes
	if size >= limit*4/5 {
		out = append(out, Diagnostic{Kind: DiagObjectSize, Message: fmt.Sprintf("the %s is %d bytes, %d%% of the %d bytes the API server stores (etcd's default request limit): its status writes will be refused past it", w.noun, size, size*100/limit, limit)})
	}
	status := len(w.Status.CompletedIndexes)
	if w.Status.FailedIndexes != nil {
		status += len(*w.Status.FailedIndexes)
	}
	if worst := w.Spec.WorstStatusSize(plan.Options{}); size-status+worst > limit && !w.finished() {
		out = append(out, Diagnostic{Kind: DiagObjectSize, Message: fmt.Sprintf("the %s's status may grow to %d bytes (its completed and failed indexes in their longest shape), past the %d bytes the API server stores: it would then fail with reason StatusTooLarge", w.noun, worst, limit)})
	}
	return out
}

// orphanOwner is what the orphan decision knows of the workload.
func (w *workload) orphanOwner() *finalizers.OrphanOwner {
	return &finalizers.OrphanOwner{UID: w.UID, ManagedBy: w.controller(), Finished: w.finished()}
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
func counterMismatches(w *workload, c *classification) []Diagnostic {
	var out []Diagnostic
	st := &w.Status
	if w.finished() {
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
	indexed := ptr.Deref(w.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	var succeeded, failed int
	var missing []int
	var completed plainindexes.Intervals
	completions := int(ptr.Deref(w.Spec.Completions, 0))
	if indexed {
		completed, _ = plainindexes.Parse(st.CompletedIndexes, completions)
	}
	for _, pod := range c.own {
		if w.kind.HasFinalizer(pod) || metav1.GetControllerOfNoCopy(pod) == nil {
			continue
		}
		switch {
		case pod.Status.Phase == corev1.PodSucceeded:
			succeeded++
			if indexed {
				if ix, err := indexes.PodIndex(w.kind, pod); err == nil && ix < completions && !completed.Has(ix) {
					missing = append(missing, ix)
				}
			}
		case pod.Status.Phase == corev1.PodFailed && pod.DeletionTimestamp == nil:
			// Pods the controller deleted had their finalizer removed first and are
			// not failures; neither are failures an Ignore rule matches.
			if podfailurepolicy.Match(w.Spec.PodFailurePolicy, pod).CountsTowardBackoff {
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
			st.CompletedIndexes, plainindexes.FromIndexes(missing))})
	}
	if failed > int(st.Failed) {
		mismatch("status.failed", st.Failed, failed, "failed without the tracking finalizer (so already counted)")
	}
	return out
}
