package finalizers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/owner"
)

// Reasons given by [DecideOrphan]. Callers may compare OrphanDecision.Reason with
// them; the texts are meant for logs.
const (
	ReasonNoFinalizer      = "pod does not carry the tracking finalizer"
	ReasonNoController     = "pod has no controller"
	ReasonNotJob           = "pod is controlled by an object that is not a batch Job"
	ReasonJobGone          = "controlling Job no longer exists"
	ReasonJobFinished      = "controlling Job has finished"
	ReasonManagedElsewhere = "controlling Job is managed by another controller"
	ReasonJobActive        = "controlling Job is live and unfinished"
)

// OrphanDecision says whether the tracking finalizer of a pod that is not (or no
// longer) tracked by a live Job may be removed, and why.
type OrphanDecision struct {
	// Remove is true when the caller should send [RemovalPatch] for the pod.
	Remove bool
	// Reason is one of the Reason constants.
	Reason string
}

// DecideOrphan decides, as the upstream orphan-pod worker does, whether the tracking
// finalizer of pod may be removed outside the sync of its Job.
//
// job is the Job the caller found under the name of the pod's controller reference
// (nil when there is no controller reference, when the controller is not a Job, or
// when no Job has that name). A job whose UID differs from the reference's is a
// different Job that reuses the name, and counts as gone. controllerName is the name
// the caller answers to in spec.managedBy; an unset managedBy belongs to
// "kubernetes.io/job-controller" (batchv1.JobControllerName). An empty controllerName
// matches no Job, so such a caller only ever cleans pods whose Job is gone.
//
// The rules, in order:
//
//  1. no tracking finalizer: nothing to remove;
//  2. no controller reference: remove (the garbage collector or a user orphaned it);
//  3. controller not a batch Job (owner.BatchJob: kind Job of group batch, any
//     version): keep (the finalizer is someone else's business);
//  4. Job nil or with another UID: remove;
//  5. Job managed by another controller: keep, even if it has finished (that
//     controller cleans its own pods);
//  6. Job finished (Complete or Failed condition True): remove;
//  7. otherwise keep: the Job's own sync counts the pod and removes the finalizer.
//
// The pod's phase and deletion state do not matter, as upstream: a running orphan
// loses the finalizer too, since no Job will ever count it.
func DecideOrphan(pod *corev1.Pod, job *batchv1.Job, controllerName string) OrphanDecision {
	if !Has(pod) {
		return OrphanDecision{Reason: ReasonNoFinalizer}
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return OrphanDecision{Remove: true, Reason: ReasonNoController}
	}
	if !owner.BatchJob.Matches(ref) {
		return OrphanDecision{Reason: ReasonNotJob}
	}
	if job == nil || job.UID != ref.UID {
		return OrphanDecision{Remove: true, Reason: ReasonJobGone}
	}
	if managedBy(job) != controllerName {
		return OrphanDecision{Reason: ReasonManagedElsewhere}
	}
	if jobFinished(job) {
		return OrphanDecision{Remove: true, Reason: ReasonJobFinished}
	}
	return OrphanDecision{Reason: ReasonJobActive}
}

func managedBy(job *batchv1.Job) string {
	if job.Spec.ManagedBy == nil {
		return batchv1.JobControllerName
	}
	return *job.Spec.ManagedBy
}

func jobFinished(job *batchv1.Job) bool {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
