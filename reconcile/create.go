package reconcile

// Creation in slow-start batches: the last step of the execution of a plan.

import (
	"errors"
	"fmt"
	"sync/atomic"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/expectations"
	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/singlepod/runplan"
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
	creates := ex.calls.create
	if len(creates) == 0 {
		return
	}
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
			switch err := ex.createPod(batch[i]); {
			case err == nil:
				created.Add(1)
			case errors.Is(err, errStoredEarlier), errors.Is(err, errNamesTaken):
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

// errNamesTaken is createPod's answer when every name it tried in this sync was held
// by a pod that is not the owner's: nothing created, nothing failed; the next sync
// goes on with the next name.
var errNamesTaken = errors.New("pod names held by pods that are not the owner's")

// maxNameAttempts bounds the names one creation tries in a sync, each refused with
// AlreadyExists and read back (two calls a name).
const maxNameAttempts = 4

// createPod creates the pod of c, raising the creation expectation first and
// lowering it when the request surely failed (not after a timeout: the pod may
// exist). A namespace being deleted is not an error of the sync.
//
// A pod the plan named (an index's) whose creation timed out is read back
// (readBack): stored, it counts as created. One the API server refused with
// AlreadyExists is read back too (resolveTaken): the owner's own pod, stored by an
// earlier request whose answer was lost, is the pod the plan wanted, and nothing is
// created; a pod that is not the owner's gives its name up at once, and the
// creation goes on, in this sync, under the next name of the index's sequence. In
// both cases the owner's pod stays expected until its event: a sync deciding on a
// cache without it could derive another name for its index (when another pod of the
// index leaves the cache first) and create a second pod.
func (ex *execution) createPod(c plan.Creation) error {
	pod := c.Pod
	for attempt := 1; ; attempt++ {
		_ = ex.r.cfg.Expectations.RaiseCreations(ex.key, 1)
		out, err := ex.r.pods.CreatePod(ex.ctx, pod)
		if err != nil && pod.Name != "" && expectations.OutcomeUnknown(err) {
			if stored := ex.readBack(pod); stored != nil {
				return ex.created(c, pod, stored, nil)
			}
		}
		if runplan.ClassifyCreateError(err, runplan.CreateErrorsJobkit, naming(pod)).Class != runplan.CreateErrorExists {
			return ex.created(c, pod, out, err)
		}
		next, err := ex.resolveTaken(c, pod.Name)
		if err != nil {
			return err
		}
		if attempt == maxNameAttempts {
			ex.log.V(2).Info("Pod names held by pods that are not the owner's; the next sync goes on", "index", c.Index, "tried", attempt)
			ex.retry("pod names held by pods that are not the owner's")
			return errNamesTaken
		}
		pod = pod.DeepCopy()
		pod.Name = next
	}
}

// naming is how pod is named: by the plan (an index's pod) or by the API server.
func naming(pod *corev1.Pod) runplan.PodNaming {
	if pod.Name == "" {
		return runplan.GeneratedName
	}
	return runplan.FixedName
}

// created reports the outcome of the request that created pod for c (or failed to).
func (ex *execution) created(c plan.Creation, pod, out *corev1.Pod, err error) error {
	r, exp, reason := ex.r, ex.r.cfg.Expectations, ex.owner.reason(c)
	if err != nil {
		if expectations.OutcomeUnknown(err) && pod.Name != "" {
			// A named pod: the next sync sends the same creation under the same
			// name, so the API server stores it at most once. Whether this one was
			// stored or not, the Job need not wait for its event.
			exp.CreationObserved(ex.key)
			ex.log.V(2).Info("Named pod creation may have happened; the next sync sends it again", "pod", pod.Name, "err", err.Error())
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
			ex.log.V(2).Info("Namespace is being deleted; not creating pods", "namespace", pod.Namespace)
			return err
		}
		r.cfg.Metrics.PodsCreated(reason, labelFailed, 1)
		r.cfg.Events.Eventf(ex.owner.object, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating: %v", err)
		ex.fail(fmt.Errorf("create pod for %s %s (%s): %w", r.logKey, ex.key, c.Reason, err))
		return err
	}
	name := pod.GenerateName
	if pod.Name != "" {
		name = pod.Name
	}
	if out != nil {
		name = out.Name
	}
	r.cfg.Metrics.PodsCreated(reason, labelSucceeded, 1)
	r.cfg.Events.Eventf(ex.owner.object, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created pod: %v", name)
	ex.log.V(2).Info("Pod created", "pod", name, "index", c.Index, "reason", c.Reason)
	return nil
}

// resolveTaken reads the pod holding name, under which the creation of c was just
// refused with AlreadyExists, and returns the name to try next, or the error that
// ends the creation: errStoredEarlier when the pod is the owner's (the plan counted
// it, rightly: it exists), the read's error when the read failed (the name is then
// given up only if no pod of the owner under it shows up for
// UncertainCreationTimeout, as before reads were made).
func (ex *execution) resolveTaken(c plan.Creation, name string) (string, error) {
	r, uid := ex.r, ex.owner.uid
	holder, err := r.pods.GetPod(ex.ctx, c.Pod.Namespace, name)
	h := holderOf(holder, err, r.cfg.Owner, uid)
	if h == holderOurs {
		// The pod the plan wanted, not in the cache yet: keep expecting it, so that
		// no sync decides on a cache without it (a pod of the index that leaves the
		// cache first would change the name the plan derives). Its event may have
		// been handled between the list and this creation's expectation: then
		// UncertainCreationTimeout ends the wait.
		ex.log.V(2).Info("Pod already created by an earlier request; waiting for its event", "pod", name)
		ex.keepExpecting()
		return "", errStoredEarlier
	}
	// This request created nothing, whoever holds the name.
	r.cfg.Expectations.CreationObserved(ex.key)
	switch h {
	case holderGone:
		ex.log.V(2).Info("Pod that held the name is gone; creating it again", "pod", name)
		return name, nil
	case holderOther:
		r.noteRefusedName(ex.key, name, r.cfg.Clock.Now(), true)
		next := nextName(ex.owner.base(c), string(uid), c.Index, name, func(n string) bool { return r.isTaken(ex.key, n) })
		ex.log.V(2).Info("Pod name held by a pod that is not the owner's; taking the next name", "pod", name, "next", next, "holderUID", holder.UID)
		return next, nil
	default:
		r.noteRefusedName(ex.key, name, r.cfg.Clock.Now(), false)
		ex.retry("the pod holding a refused name could not be read")
		err = fmt.Errorf("read pod %s/%s, whose name a creation for %s %s was refused under: %w", c.Pod.Namespace, name, r.logKey, ex.key, err)
		ex.fail(err)
		return "", err
	}
}

// readBack reads the pod of a named creation whose outcome is unknown (a timeout,
// a lost answer), and returns it when the owner's pod stands under the name: the
// creation happened, its expectation stays until its event, as for any pod created
// (UncertainCreationTimeout ends the wait should that pod be an earlier request's,
// whose event came before this creation was expected). Nil when the read shows
// anything else or fails: the creation is then given back as unknown.
func (ex *execution) readBack(pod *corev1.Pod) *corev1.Pod {
	r := ex.r
	stored, err := r.pods.GetPod(ex.ctx, pod.Namespace, pod.Name)
	if holderOf(stored, err, r.cfg.Owner, ex.owner.uid) != holderOurs {
		return nil
	}
	ex.log.V(2).Info("Pod creation timed out after the pod was stored; waiting for its event", "pod", pod.Name)
	ex.keepExpecting()
	return stored
}

// keepExpecting keeps a creation expected until its event, or until
// UncertainCreationTimeout has passed, when the event may already have been handled.
func (ex *execution) keepExpecting() {
	r := ex.r
	r.noteUncertainCreate(ex.key, r.cfg.Clock.Now())
	ex.mu.Lock()
	ex.res.RequeueAfter = minPositive(ex.res.RequeueAfter, r.cfg.UncertainCreationTimeout)
	ex.mu.Unlock()
}

// holder is what a live read tells of the pod holding a name.
type holder int

const (
	holderUnknown holder = iota // the read failed
	holderOurs                  // controlled by the owner: its own earlier creation
	holderOther                 // released, another owner's, or foreign
	holderGone                  // no pod has the name any more
)

// holderOf classifies the answer (pod, err) of a live read of a pod by name for the
// owner of kind with UID uid.
func holderOf(pod *corev1.Pod, err error, kind owner.Kind, uid types.UID) holder {
	switch {
	case apierrors.IsNotFound(err):
		return holderGone
	case err != nil || pod == nil:
		return holderUnknown
	case kind.IsControlledBy(pod, string(uid)):
		return holderOurs
	}
	return holderOther
}

// nextName returns the first name after name in the sequence of index's pod names
// (indexes.NextPodName) that taken does not hold, looking at most maxTakenNames
// names ahead, as the plan does.
func nextName(ownerName, ownerUID string, index int, name string, taken func(string) bool) string {
	next := indexes.NextPodName(ownerName, ownerUID, index, name)
	for n := 1; taken(next) && n < maxTakenNames; n++ {
		next = indexes.NextPodName(ownerName, ownerUID, index, next)
	}
	return next
}

// maxTakenNames bounds the taken names nextName skips (plan's bound).
const maxTakenNames = 64

// jobCreationReason is the reason label in job_pods_creation_total of the
// creations of a Job: new pods, or replacements by its pod replacement policy.
func jobCreationReason(w *plan.Workload) string {
	if w.Status.Failed == 0 {
		return labelCreationNew
	}
	if w.Spec.EffectivePodReplacementPolicy() == batchv1.Failed {
		return labelRecreateFailed
	}
	return labelRecreateTerminatingOrFailed
}
