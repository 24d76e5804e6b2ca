package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/concurrency"
	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	"github.com/jobkit/jobkit/podoutcome"
	"github.com/jobkit/jobkit/reconcile"
)

// Descriptions this controller writes, besides those of podoutcome, deadlines
// and reconcile.CreateErrorMessage.
const (
	// MessageWaiting begins the description of a run held back by a limit; the
	// reason follows after ": ".
	MessageWaiting = "Waiting"
	// MessageTriggered is the description of a run whose pod was created
	// (plank's wording).
	MessageTriggered = "Job triggered."
	// MessageAborted is the description of an aborted run that had none.
	MessageAborted = "Job aborted."
	// MessageSuperseded begins the description of a run aborted by a newer run
	// with the same jobName and dedupeKey; the newer run's name follows.
	MessageSuperseded = "Superseded by a newer run"
	// MessageReplacing begins the description of a run whose pod is being
	// replaced after it stopped unexpectedly.
	MessageReplacing = "Replacing pod"
)

// conflictRetry is how soon a reconcile that lost an optimistic-concurrency race
// runs again: the cache will have the newer object by then.
const conflictRetry = 100 * time.Millisecond

// gvk is the RunJob kind, for controller references.
var gvk = v1alpha1.SchemeGroupVersion.WithKind("RunJob")

// Reconciler reconciles RunJobs. Create it with New and register it with
// SetupWithManager.
type Reconciler struct {
	client client.Client // reads from the manager's cache, writes to the API server
	cfg    Config
	locks  concurrency.KeyedMutex[string]
}

// New returns a Reconciler that reads through c (normally the manager's
// cached client) and writes through it. It fails, matching ErrInvalidConfig, for
// a negative count or duration or an empty queue name in cfg.
func New(c client.Client, cfg Config) (*Reconciler, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidConfig)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Reconciler{client: c, cfg: cfg.withDefaults()}, nil
}

// SetupWithManager registers the controller: it watches RunJobs and the pods
// they own, and wakes up waiting runs when a run stops holding a slot.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.RunJob{}).
		Owns(&corev1.Pod{}).
		Watches(&v1alpha1.RunJob{}, r.wakeWaiting()).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.cfg.Workers}).
		Named("plank").
		Complete(r)
}

// Reconcile brings one RunJob one step further.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rj v1alpha1.RunJob
	if err := r.client.Get(ctx, req.NamespacedName, &rj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rj.Status.CompletionTime != nil {
		return ctrl.Result{}, nil
	}
	res, err := r.sync(ctx, &rj)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("Conflict writing, retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

func (r *Reconciler) sync(ctx context.Context, rj *v1alpha1.RunJob) (ctrl.Result, error) {
	if rj.Status.State == "" {
		now := metav1.NewTime(r.cfg.Clock.Now())
		if err := r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
			st.State = v1alpha1.StateTriggered
			st.StartTime = &now
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if rj.Spec.DedupeKey != "" && !rj.Status.State.Finished() {
		if err := r.dedupe(ctx, rj); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch {
	case rj.Status.State == v1alpha1.StateTriggered:
		return r.syncTriggered(ctx, rj)
	case rj.Status.State == v1alpha1.StatePending:
		return r.syncPending(ctx, rj)
	case rj.Status.State.Finished():
		return ctrl.Result{}, r.complete(ctx, rj)
	}
	return ctrl.Result{}, nil // an unknown state: leave the run to whoever set it
}

// syncTriggered starts the run's pod if the limits allow it.
func (r *Reconciler) syncTriggered(ctx context.Context, rj *v1alpha1.RunJob) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	unlock, ok := r.locks.TryLockAll(r.lockKeys(rj)...)
	if !ok {
		return ctrl.Result{RequeueAfter: r.cfg.LockRetry}, nil
	}
	defer unlock()

	// A pod that already exists (created by an earlier sync whose status write
	// failed) is adopted without asking the limits, as plank does.
	var existing corev1.Pod
	switch err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: podName(rj)}, &existing); {
	case err == nil:
		if !metav1.IsControlledBy(&existing, rj) {
			return ctrl.Result{}, r.finish(ctx, rj, v1alpha1.StateError,
				fmt.Sprintf("Pod %s exists and does not belong to this run", existing.Name), false)
		}
		return ctrl.Result{}, r.markPending(ctx, rj)
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}

	var runs v1alpha1.RunJobList
	if err := r.client.List(ctx, &runs, client.InNamespace(rj.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	peers := make([]concurrency.Peer, 0, len(runs.Items))
	for i := range runs.Items {
		peers = append(peers, peerOf(&runs.Items[i]))
	}
	d, err := concurrency.Decide(concurrency.Candidate{Peer: peerOf(rj), MaxConcurrency: int(rj.Spec.MaxConcurrency)}, peers,
		concurrency.Limits{MaxPending: r.cfg.MaxPending, Queues: r.cfg.Queues, RetryAfter: r.cfg.RetryAfter})
	switch {
	case errors.Is(err, concurrency.ErrUnknownQueue):
		// The controller may be restarted with the queue configured: wait.
		return ctrl.Result{RequeueAfter: r.cfg.RetryAfter},
			r.describe(ctx, rj, fmt.Sprintf("%s: queue %q is not configured in the controller (--queue)", MessageWaiting, rj.Spec.QueueName))
	case err != nil:
		return ctrl.Result{}, r.finish(ctx, rj, v1alpha1.StateError, "Invalid run: "+err.Error(), false)
	case !d.Allowed:
		logger.V(1).Info("Held back", "limit", d.BlockedBy, "reason", d.Message)
		return ctrl.Result{RequeueAfter: d.RetryAfter}, r.describe(ctx, rj, MessageWaiting+": "+d.Message)
	}

	res, err := r.createPod(ctx, rj)
	if err != nil || !res.IsZero() {
		return res, err
	}
	if rj.Status.State.Finished() {
		return ctrl.Result{}, nil
	}
	// Still under the locks: the next decision must see this run as pending.
	return ctrl.Result{}, r.markPending(ctx, rj)
}

// createPod creates the run's pod. A refused create ends the run (its state
// is then final); AlreadyExists asks for a retry once the cache has the pod.
func (r *Reconciler) createPod(ctx context.Context, rj *v1alpha1.RunJob) (ctrl.Result, error) {
	pod := newPod(rj)
	err := r.client.Create(ctx, pod)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("Created pod", "pod", pod.Name)
		// Wait until the pod cache has it, or the next sync would find no pod
		// and create it again.
		key := client.ObjectKeyFromObject(pod)
		read := func(ctx context.Context) (string, error) {
			var cached corev1.Pod
			if err := r.client.Get(ctx, key, &cached); err != nil {
				return "", err
			}
			return cached.ResourceVersion, nil
		}
		return ctrl.Result{}, reconcile.WaitForCacheSync(ctx, "Pod "+key.String(), pod.ResourceVersion, read, r.cfg.CacheSync)
	case apierrors.IsAlreadyExists(err):
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	case reconcile.IsTerminalCreateError(err):
		return ctrl.Result{}, r.finish(ctx, rj, v1alpha1.StateError, reconcile.CreateErrorMessage(err), false)
	}
	return ctrl.Result{}, fmt.Errorf("creating pod for RunJob %s/%s: %w", rj.Namespace, rj.Name, err)
}

func (r *Reconciler) markPending(ctx context.Context, rj *v1alpha1.RunJob) error {
	now := metav1.NewTime(r.cfg.Clock.Now())
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
		st.State = v1alpha1.StatePending
		st.PodName = podName(rj)
		if st.PendingTime == nil {
			st.PendingTime = &now
		}
		st.Description = MessageTriggered
	})
}

// syncPending judges the run's pod and takes the next step.
func (r *Reconciler) syncPending(ctx context.Context, rj *v1alpha1.RunJob) (ctrl.Result, error) {
	var pod corev1.Pod
	err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: podName(rj)}, &pod)
	if apierrors.IsNotFound(err) {
		// Gone (replaced after an unexpected stop, or deleted by someone):
		// recreate it at once, without asking the limits, as plank does.
		return r.createPod(ctx, rj)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !metav1.IsControlledBy(&pod, rj) {
		return ctrl.Result{}, r.finish(ctx, rj, v1alpha1.StateError,
			fmt.Sprintf("Pod %s exists and does not belong to this run", pod.Name), false)
	}

	opts, rev := r.outcomeOptions(rj), podoutcome.Revivals{Count: int(rj.Status.Revivals), Pod: rj.Status.RevivedPodUID}
	step, err := podoutcome.Decide(&pod, rev, opts, r.cfg.Clock.Now())
	if err != nil {
		return ctrl.Result{}, r.finish(ctx, rj, v1alpha1.StateError, "Invalid run: "+err.Error(), false)
	}
	log.FromContext(ctx).V(1).Info("Pod judged", "pod", pod.Name, "outcome", step.Outcome, "action", step.Action, "reason", step.Reason)

	// The revival is recorded before the pod goes, so that a crash in between
	// cannot lose it and the max-revivals bound holds across restarts.
	if step.Revivals != rev {
		if err := r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
			st.Revivals = int32(step.Revivals.Count)
			st.RevivedPodUID = step.Revivals.Pod
			st.Description = fmt.Sprintf("%s %s (%s), revival %d.", MessageReplacing, pod.Name, step.Reason, step.Revivals.Count)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}

	switch step.Action {
	case podoutcome.ActionWait:
		return ctrl.Result{RequeueAfter: step.RequeueAfter}, nil
	case podoutcome.ActionRetry:
		if step.DeletePod {
			return ctrl.Result{}, r.deletePod(ctx, &pod)
		}
		return ctrl.Result{}, nil // already terminating: its deletion wakes us up
	}
	state, ok := finalStates[step.Action]
	if !ok {
		return ctrl.Result{}, fmt.Errorf("RunJob %s/%s: unexpected action %q", rj.Namespace, rj.Name, step.Action)
	}
	// A pod to delete (a timeout) is deleted after the final state is written,
	// and the run completed after that (complete), so that a failed write cannot
	// make the next sync recreate the pod.
	if err := r.finish(ctx, rj, state, step.Message, step.DeletePod); err != nil {
		return ctrl.Result{}, err
	}
	if step.DeletePod {
		return ctrl.Result{}, r.complete(ctx, rj)
	}
	return ctrl.Result{}, nil
}

var finalStates = map[podoutcome.Action]v1alpha1.State{
	podoutcome.ActionComplete: v1alpha1.StateSuccess,
	podoutcome.ActionFail:     v1alpha1.StateFailure,
	podoutcome.ActionError:    v1alpha1.StateError,
	podoutcome.ActionAbort:    v1alpha1.StateAborted,
}

// finish records a final state. With deletePodFirst the completion time is
// left for complete, which deletes the pod first.
func (r *Reconciler) finish(ctx context.Context, rj *v1alpha1.RunJob, state v1alpha1.State, msg string, deletePodFirst bool) error {
	log.FromContext(ctx).Info("Run finished", "state", state, "description", msg)
	now := metav1.NewTime(r.cfg.Clock.Now())
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
		st.State = state
		st.Description = msg
		if !deletePodFirst {
			st.CompletionTime = &now
		}
	})
}

// complete deletes the pod of a run in a final state (an aborted run, a timed
// out one) and then sets its completion time.
func (r *Reconciler) complete(ctx context.Context, rj *v1alpha1.RunJob) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: podName(rj)}}
	if err := r.deletePod(ctx, pod); err != nil {
		return err
	}
	now := metav1.NewTime(r.cfg.Clock.Now())
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
		st.CompletionTime = &now
		if st.State == v1alpha1.StateAborted && transientDescription(st.Description) {
			st.Description = MessageAborted
		}
	})
}

// transientDescription reports whether desc is empty or one this controller
// writes for a run that has not finished, so that a run aborted through its
// status without a description of its own does not keep saying "Job triggered.".
func transientDescription(desc string) bool {
	return desc == "" || desc == MessageTriggered ||
		strings.HasPrefix(desc, MessageWaiting+": ") || strings.HasPrefix(desc, MessageReplacing)
}

// deletePod deletes pod, with its UID as a precondition when known (so that a
// replacement with the same name survives), ignoring a pod already gone.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	var opts []client.DeleteOption
	if pod.UID != "" {
		opts = append(opts, client.Preconditions{UID: &pod.UID})
	}
	err := r.client.Delete(ctx, pod, opts...)
	if apierrors.IsNotFound(err) || (pod.UID != "" && apierrors.IsConflict(err)) {
		return nil
	}
	if err == nil {
		log.FromContext(ctx).Info("Deleted pod", "pod", pod.Name)
	}
	return err
}

// dedupe aborts every unfinished run with rj's jobName and dedupeKey except the
// newest (by creation time, then UID); that may be rj itself.
func (r *Reconciler) dedupe(ctx context.Context, rj *v1alpha1.RunJob) error {
	var runs v1alpha1.RunJobList
	if err := r.client.List(ctx, &runs, client.InNamespace(rj.Namespace)); err != nil {
		return err
	}
	newest := rj
	var group []*v1alpha1.RunJob
	for i := range runs.Items {
		o := &runs.Items[i]
		if o.UID == rj.UID || o.Spec.JobName != rj.Spec.JobName || o.Spec.DedupeKey != rj.Spec.DedupeKey ||
			o.Status.State.Finished() || o.Status.CompletionTime != nil {
			continue
		}
		group = append(group, o)
		if newer(o, newest) {
			newest = o
		}
	}
	for _, o := range append(group, rj) {
		if o == newest {
			continue
		}
		msg := fmt.Sprintf("%s %s.", MessageSuperseded, newest.Name)
		log.FromContext(ctx).Info("Aborting superseded run", "run", o.Name, "newer", newest.Name)
		if err := r.writeStatus(ctx, o, func(st *v1alpha1.RunJobStatus) {
			st.State = v1alpha1.StateAborted
			st.Description = msg
		}); err != nil {
			return err
		}
	}
	return nil
}

func newer(a, b *v1alpha1.RunJob) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.UID > b.UID
}

// describe records msg as the description of a run that stays in its state,
// unless it already says so (so that a run held back is not rewritten every
// retry).
func (r *Reconciler) describe(ctx context.Context, rj *v1alpha1.RunJob, msg string) error {
	if rj.Status.Description == msg {
		return nil
	}
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) { st.Description = msg })
}

// writeStatus applies mutate to a copy of rj's status, writes it (with rj's
// resourceVersion as precondition), waits until the cache shows the write, and
// then updates rj in place. rj is a copy owned by this reconcile, never an
// object shared with the cache.
func (r *Reconciler) writeStatus(ctx context.Context, rj *v1alpha1.RunJob, mutate func(*v1alpha1.RunJobStatus)) error {
	updated := rj.DeepCopy()
	mutate(&updated.Status)
	if err := r.client.Status().Update(ctx, updated); err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(updated)
	read := func(ctx context.Context) (string, error) {
		var cached v1alpha1.RunJob
		if err := r.client.Get(ctx, key, &cached); err != nil {
			return "", err
		}
		return cached.ResourceVersion, nil
	}
	*rj = *updated
	return reconcile.WaitForCacheSync(ctx, "RunJob "+key.String(), updated.ResourceVersion, read, r.cfg.CacheSync)
}

// lockKeys are the locks a start takes: one per limit that counts other runs.
func (r *Reconciler) lockKeys(rj *v1alpha1.RunJob) []string {
	keys := make([]string, 0, 3)
	if r.cfg.MaxPending > 0 {
		keys = append(keys, "pending/"+rj.Namespace)
	}
	if rj.Spec.MaxConcurrency > 0 {
		keys = append(keys, "job/"+rj.Namespace+"/"+rj.Spec.JobName)
	}
	if rj.Spec.QueueName != "" {
		keys = append(keys, "queue/"+rj.Namespace+"/"+rj.Spec.QueueName)
	}
	return keys
}

func (r *Reconciler) outcomeOptions(rj *v1alpha1.RunJob) podoutcome.Options {
	t := *r.cfg.DefaultTimeouts
	if s := rj.Spec.Timeouts; s != nil {
		t.Unscheduled = durationOr(s.Unscheduled, t.Unscheduled)
		t.Pending = durationOr(s.Pending, t.Pending)
		t.Running = durationOr(s.Running, t.Running)
	}
	maxRevivals := podoutcome.DefaultMaxRevivals
	if rj.Spec.MaxRevivals != nil {
		maxRevivals = int(*rj.Spec.MaxRevivals)
	}
	return podoutcome.Options{ErrorOnEviction: rj.Spec.ErrorOnEviction, MaxRevivals: maxRevivals, Timeouts: t}
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

// peerOf describes a run for concurrency.Decide.
func peerOf(rj *v1alpha1.RunJob) concurrency.Peer {
	state := concurrency.StateFinished
	switch {
	case rj.Status.CompletionTime != nil:
	case rj.Status.State == "" || rj.Status.State == v1alpha1.StateTriggered:
		state = concurrency.StateTriggered
	case rj.Status.State == v1alpha1.StatePending:
		state = concurrency.StatePending
	}
	return concurrency.Peer{UID: rj.UID, JobName: rj.Spec.JobName, Queue: rj.Spec.QueueName, State: state, Created: rj.CreationTimestamp.Time}
}

func podName(rj *v1alpha1.RunJob) string {
	if rj.Status.PodName != "" {
		return rj.Status.PodName
	}
	return rj.Name
}

// newPod returns the pod of rj: the run's name and namespace, its pod spec
// (restartPolicy Never unless set), LabelRunUID and a controller reference.
func newPod(rj *v1alpha1.RunJob) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            podName(rj),
			Namespace:       rj.Namespace,
			Labels:          map[string]string{LabelRunUID: string(rj.UID)},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rj, gvk)},
		},
		Spec: *rj.Spec.PodSpec.DeepCopy(),
	}
	if pod.Spec.RestartPolicy == "" {
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return pod
}
