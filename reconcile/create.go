package reconcile

// Creation in slow-start batches: the last step of the execution of a plan.

import (
	"errors"
	"fmt"
	"sync/atomic"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/plan"
)

// slowStartInitialBatchSize is the size of the first batch of creations; each next
// batch is twice as large (upstream's SlowStartInitialBatchSize).
const slowStartInitialBatchSize = 1

// createPods creates the pods of the plan in slow-start batches that double after
// each batch without error; after a batch with an error, the creations not yet tried
// are dropped. The first batch has the size the Job's last batch without error had
// (1 for a Job's first creations), and half the size of a batch that failed, so a
// large Job creates its pods in one round trip per sync once the API server has
// accepted them, and backs off as fast as upstream when it does not.
func (ex *execution) createPods() {
	creates := ex.plan.Create
	if len(creates) == 0 {
		return
	}
	reason := ex.creationReason()
	var created atomic.Int32
	next, size := 0, ex.r.batchSize(ex.key)
	defer func() { ex.r.setBatchSize(ex.key, size) }()
	for next < len(creates) {
		if err := ex.ctx.Err(); err != nil {
			ex.fail(fmt.Errorf("create pods: %w", err))
			break
		}
		batch := creates[next:min(next+size, len(creates))]
		next += len(batch)
		var failed, nsGone atomic.Bool
		ex.parallel(len(batch), func(i int) {
			switch err := ex.createPod(batch[i], reason); {
			case err == nil:
				created.Add(1)
			case errors.Is(err, errStoredEarlier):
			case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
				nsGone.Store(true)
			default:
				failed.Store(true)
			}
		})
		if failed.Load() || nsGone.Load() {
			if skipped := len(creates) - next; skipped > 0 {
				ex.log.V(2).Info("Dropping the creations not tried after a failed batch", "skipped", skipped, "namespaceTerminating", nsGone.Load())
			}
			size = max(len(batch)/2, slowStartInitialBatchSize)
			break
		}
		if next < len(creates) {
			size = min(size*2, ex.r.maxBatch())
		}
	}
	ex.res.Created += int(created.Load())
}

// maxBatch is the largest creation batch: a sync never creates more pods.
func (r *Reconciler) maxBatch() int {
	if r.cfg.MaxCreatesPerSync > 0 {
		return r.cfg.MaxCreatesPerSync
	}
	return plan.DefaultMaxCreatesPerSync
}

// errStoredEarlier is createPod's answer for a pod that an earlier, timed-out
// request had already stored: neither created now nor failed.
var errStoredEarlier = errors.New("pod stored by an earlier request")

// createPod creates one pod, raising the creation expectation first and lowering it
// when the request surely failed (not after a timeout: the pod may exist). A
// namespace being deleted is not an error of the sync.
func (ex *execution) createPod(c plan.Creation, reason string) error {
	r := ex.r
	exp := r.cfg.Expectations
	_ = exp.RaiseCreations(ex.key, 1)
	out, err := r.pods.CreatePod(ex.ctx, c.Pod)
	if err != nil && c.Pod.Name != "" && apierrors.IsAlreadyExists(err) {
		// The plan names an index's pod after what it knew of the index, so this is
		// the same creation sent again after one that timed out once the API server
		// had stored it: the pod exists and its event is on the way.
		// Should no event bring it, another pod holds the name (one the Job
		// released): after UncertainCreationTimeout the plan names the pod
		// otherwise (takenNames).
		exp.CreationObserved(ex.key)
		r.noteRefusedName(ex.key, c.Pod.Name, r.cfg.Clock.Now())
		ex.log.V(2).Info("Pod already created by an earlier request; waiting for its event", "pod", c.Pod.Name)
		ex.retry("a pod was stored by an earlier request; waiting for its event")
		return errStoredEarlier
	}
	if err != nil {
		if expectations.OutcomeUnknown(err) && c.Pod.Name != "" {
			// A named pod: the next sync sends the same creation under the same
			// name, so the API server stores it at most once. Whether this one was
			// stored or not, the Job need not wait for its event.
			exp.CreationObserved(ex.key)
			ex.log.V(2).Info("Named pod creation may have happened; the next sync sends it again", "pod", c.Pod.Name, "err", err.Error())
		} else if expectations.OutcomeUnknown(err) {
			// The pod may exist (a timeout, a lost answer): keep expecting it, so
			// that no sync creates a second pod or finishes the Job without it
			// before its event arrives or UncertainCreationTimeout has passed.
			ex.log.V(2).Info("Pod creation may have happened; waiting for its event", "err", err.Error())
			r.noteUncertainCreate(ex.key, r.cfg.Clock.Now())
			ex.mu.Lock()
			ex.res.RequeueAfter = minPositive(ex.res.RequeueAfter, r.cfg.UncertainCreationTimeout)
			ex.mu.Unlock()
		} else {
			exp.CreationObserved(ex.key)
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			ex.log.V(2).Info("Namespace is being deleted; not creating pods", "namespace", c.Pod.Namespace)
			return err
		}
		r.cfg.Metrics.PodsCreated(reason, Failed, 1)
		r.cfg.Events.Eventf(ex.orig.Object, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		ex.fail(fmt.Errorf("create pod for job %s (%s): %w", ex.key, c.Reason, err))
		return err
	}
	name := c.Pod.GenerateName
	if out != nil {
		name = out.Name
	}
	r.cfg.Metrics.PodsCreated(reason, Succeeded, 1)
	r.cfg.Events.Eventf(ex.orig.Object, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %v", name)
	ex.log.V(2).Info("Pod created", "pod", name, "index", c.Index, "reason", c.Reason)
	return nil
}

// creationReason is the reason label of job_pods_creation_total.
func (ex *execution) creationReason() string {
	if ex.orig.Status.Failed == 0 {
		return CreationNew
	}
	policy := batchv1.TerminatingOrFailed
	if ex.orig.Spec.PodFailurePolicy != nil {
		policy = batchv1.Failed
	}
	if ptr.Deref(ex.orig.Spec.PodReplacementPolicy, policy) == batchv1.Failed {
		return CreationRecreateFailed
	}
	return CreationRecreateTerminatingOrFailed
}
