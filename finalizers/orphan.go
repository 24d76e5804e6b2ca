package finalizers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/jobstatus"
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
	// ReasonRemovalInFlight is given by reconcile's Reconciler.CleanOrphan, never by
	// DecideOrphan: the owner's own sync has had this removal accepted and the
	// cache does not show it yet, so a second patch would do nothing.
	ReasonRemovalInFlight = "the owner's sync already removed the tracking finalizer; the cache does not show it yet"
)

// OrphanDecision says whether the tracking finalizer of a pod that is not (or no
// longer) tracked by a live Job may be removed, and why.
type OrphanDecision struct {
	// Remove is true when the caller should send [RemovalPatch] for the pod.
	Remove bool
	// Reason is one of the Reason constants, to compare with: their texts are in a
	// batch/v1 Job's terms whatever the owner's kind.
	Reason string
	// Message is Reason in the owner's terms, for logs and events: the same text
	// for a batch/v1 Job, the owner's kind for another ("controlling TrainingJob no
	// longer exists").
	Message string
}

// orphanDecision builds the decision of reason for an owner of kind.
func orphanDecision(kind owner.Kind, remove bool, reason string) OrphanDecision {
	return OrphanDecision{Remove: remove, Reason: reason, Message: orphanMessage(kind, reason)}
}

// orphanMessage is reason with the owner's kind where it says "Job".
func orphanMessage(kind owner.Kind, reason string) string {
	if kind == owner.BatchJob {
		return reason
	}
	switch reason {
	case ReasonNotJob:
		return "pod is controlled by an object that is not a " + kind.Kind
	case ReasonJobGone:
		return "controlling " + kind.Kind + " no longer exists"
	case ReasonJobFinished:
		return "controlling " + kind.Kind + " has finished"
	case ReasonManagedElsewhere:
		return "controlling " + kind.Kind + " is managed by another controller"
	case ReasonJobActive:
		return "controlling " + kind.Kind + " is live and unfinished"
	}
	return reason
}

// OrphanOwner is what the orphan decision needs to know of the object that a pod's
// controller reference names, as the caller's cache shows it: any kind of owner.
type OrphanOwner struct {
	// UID is the object's UID: a pod whose reference has another UID belongs to an
	// object that is gone (one that reused the name does not count it).
	UID types.UID
	// ManagedBy names the controller that manages the object (spec.managedBy of a
	// Job, "kubernetes.io/job-controller" when unset). Empty, for an owner of a kind
	// other than a batch/v1 Job, means the kind's controller: whoever decides (as in
	// plan, where a custom resource without managedBy is its controller's).
	ManagedBy string
	// Finished reports whether the object has finished: its pods are counted no more.
	Finished bool
	// Gone says the caller knows the object no longer exists (it saw its deletion,
	// or its replacement by an object with a new UID): the decision frees the pod as
	// for a nil owner, and reconcile's Reconciler.CleanOrphan makes no live read to
	// confirm it. The other fields are then not read.
	Gone bool
}

// JobOwner returns what the orphan decision needs of job, or nil for a nil job.
func JobOwner(job *batchv1.Job) *OrphanOwner {
	if job == nil {
		return nil
	}
	_, done := jobstatus.Finished(&job.Status)
	return &OrphanOwner{UID: job.UID, ManagedBy: managedBy(job), Finished: done}
}

// DecideOrphan decides, as the upstream orphan-pod worker does, whether the tracking
// finalizer (kind.Finalizer) of pod may be removed outside the sync of its owner, an
// object of kind (owner.BatchJob for batch/v1 Jobs).
//
// own is what the caller's cache shows of the object found under the name of the
// pod's controller reference ([JobOwner] converts a Job); nil when there is no
// controller reference, when the controller is not of kind, or when no such object
// exists. An own whose UID differs from the reference's is a different object that
// reuses the name, and counts as gone. controllerName is the name the caller answers
// to in spec.managedBy; a batch/v1 Job with managedBy unset belongs to
// "kubernetes.io/job-controller" (batchv1.JobControllerName). An empty controllerName
// matches no Job, so such a caller only ever cleans pods whose Job is gone. For an
// owner of another kind, an empty own.ManagedBy means the kind's controller.
//
// The rules, in order ("Job" read as the owner, here and in the Reason texts;
// OrphanDecision.Message names the owner's kind):
//
//  1. no tracking finalizer: nothing to remove;
//  2. no controller reference: remove (the garbage collector or a user orphaned it);
//  3. controller not of kind (for owner.BatchJob: kind Job of group batch, any
//     version): keep (the finalizer is someone else's business);
//  4. owner nil, Gone, or with another UID: remove;
//  5. owner managed by another controller: keep, even if it has finished (that
//     controller cleans its own pods);
//  6. owner finished (for a Job, Complete or Failed condition True): remove;
//  7. otherwise keep: the owner's own sync counts the pod and removes the finalizer.
//
// The pod's phase and deletion state do not matter, as upstream: a running orphan
// loses the finalizer too, since no owner will ever count it.
func DecideOrphan(kind owner.Kind, pod *corev1.Pod, own *OrphanOwner, controllerName string) OrphanDecision {
	if pod == nil || !kind.HasFinalizer(pod) {
		return orphanDecision(kind, false, ReasonNoFinalizer)
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return orphanDecision(kind, true, ReasonNoController)
	}
	if !kind.Matches(ref) {
		return orphanDecision(kind, false, ReasonNotJob)
	}
	if own == nil || own.Gone || own.UID != ref.UID {
		return orphanDecision(kind, true, ReasonJobGone)
	}
	if own.ManagedBy != controllerName && (own.ManagedBy != "" || kind == owner.BatchJob) {
		return orphanDecision(kind, false, ReasonManagedElsewhere)
	}
	if own.Finished {
		return orphanDecision(kind, true, ReasonJobFinished)
	}
	return orphanDecision(kind, false, ReasonJobActive)
}

// managedBy is plan.Workload.Controller for a Job: package plan imports finalizers,
// so finalizers cannot call plan, and hack/facts lists this file as a second home.
func managedBy(job *batchv1.Job) string {
	if job.Spec.ManagedBy == nil {
		return batchv1.JobControllerName
	}
	return *job.Spec.ManagedBy
}
