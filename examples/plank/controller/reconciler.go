package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
	"github.com/jobkit/jobkit/runplan"
)

// Descriptions this controller writes, all decided by runplan (besides those of
// podoutcome and deadlines); kept here under their old names.
const (
	// MessageWaiting begins the description of a run held back by a limit; the
	// reason follows after ": ".
	MessageWaiting = runplan.MessageWaiting
	// MessageTriggered is the description of a run whose pod was created
	// (plank's wording).
	MessageTriggered = runplan.MessageTriggered
	// MessageAborted is the description of an aborted run that had none.
	MessageAborted = runplan.MessageAborted
	// MessageSuperseded begins the description of a run aborted by a newer run
	// with the same jobName and dedupeKey; the newer run's name follows.
	MessageSuperseded = runplan.MessageSuperseded
	// MessageReplacing begins the description of a run whose pod is being
	// replaced after it stopped unexpectedly.
	MessageReplacing = runplan.MessageReplacing
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

// Reconcile brings one RunJob one step further: it reads the run, its pod and
// the runs of its namespace from the cache, asks runplan.Compute what to do
// and executes the plan.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var rj v1alpha1.RunJob
	if err := r.client.Get(ctx, req.NamespacedName, &rj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	res, err := r.sync(ctx, &rj)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("Conflict writing, retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

func (r *Reconciler) sync(ctx context.Context, rj *v1alpha1.RunJob) (ctrl.Result, error) {
	// A run that may start takes the locks of the limits it counts against,
	// so that "compute, create the pod, record pending" is atomic across
	// workers.
	if runplan.Waits(runOf(rj)) {
		unlock, ok := r.locks.TryLockAll(r.lockKeys(rj)...)
		if !ok {
			return ctrl.Result{RequeueAfter: r.cfg.LockRetry}, nil
		}
		defer unlock()
	}
	pod, err := r.getPod(ctx, rj)
	if err != nil {
		return ctrl.Result{}, err
	}
	var runs v1alpha1.RunJobList
	if err := r.client.List(ctx, &runs, client.InNamespace(rj.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	peers := make([]runplan.Run, len(runs.Items))
	for i := range runs.Items {
		peers[i] = runOf(&runs.Items[i])
	}
	p, err := runplan.Compute(runplan.Input{
		Run:          runOf(rj),
		Pod:          pod,
		Peers:        peers,
		Limits:       r.limits(),
		Outcome:      r.outcomeOptions(rj),
		CreateErrors: r.cfg.CreateErrors,
		Now:          r.cfg.Clock.Now(),
	})
	if err != nil {
		if errors.Is(err, runplan.ErrInvalidInput) {
			// Invalid configuration (a queue the controller does not know): say so
			// on the run, and retry with backoff, as plank does, in case the
			// configuration changes.
			s := runplan.Status{Description: "Invalid configuration: " + err.Error()}
			if rj.Status.State == "" {
				s.State = runplan.StateTriggered // a new run is triggered, whatever holds it back
			}
			if rerr := r.record(ctx, rj, s, false); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return ctrl.Result{}, fmt.Errorf("RunJob %s/%s: %w", rj.Namespace, rj.Name, err)
	}
	return r.execute(ctx, rj, &runs, p)
}

// execute carries out p in the order documented on runplan.Plan.
func (r *Reconciler) execute(ctx context.Context, rj *v1alpha1.RunJob, runs *v1alpha1.RunJobList, p runplan.Plan) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	if p.Action != runplan.ActionNone {
		logger.V(1).Info("Plan", "plan", p.String())
	}
	if !p.StartTime.IsZero() {
		start := metav1.NewTime(p.StartTime)
		if err := r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
			st.State, st.StartTime = v1alpha1.StateTriggered, &start
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, s := range p.Supersede {
		if err := r.supersede(ctx, runs, s); err != nil {
			return ctrl.Result{}, err
		}
	}

	switch p.Action {
	case runplan.ActionCreate:
		if err := r.createPod(ctx, rj); err != nil {
			next := p.CreateFailed(err)
			if next.Action == runplan.ActionBackoff {
				return ctrl.Result{}, fmt.Errorf("creating pod for RunJob %s/%s: %w", rj.Namespace, rj.Name, err)
			}
			return r.execute(ctx, rj, runs, next)
		}
		if err := r.record(ctx, rj, p.Status, false); err != nil {
			return ctrl.Result{}, err
		}
	case runplan.ActionAdopt, runplan.ActionWait:
		if err := r.record(ctx, rj, p.Status, false); err != nil {
			return ctrl.Result{}, err
		}
	case runplan.ActionRevive:
		if err := r.record(ctx, rj, p.Status, false); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.podEffects(ctx, rj, p.Pod); err != nil {
			return ctrl.Result{}, err
		}
	case runplan.ActionFinish:
		logger.Info("Run finished", "state", p.Status.State, "reason", p.Reason, "description", p.Status.Description)
		if err := r.record(ctx, rj, p.Status, p.Pod.Delete); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.podEffects(ctx, rj, p.Pod); err != nil {
			return ctrl.Result{}, err
		}
		if p.Pod.Delete {
			if err := r.record(ctx, rj, runplan.Status{Complete: true}, false); err != nil {
				return ctrl.Result{}, err
			}
		}
	case runplan.ActionNone:
	default:
		return ctrl.Result{}, fmt.Errorf("RunJob %s/%s: unexpected plan %s", rj.Namespace, rj.Name, p)
	}
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// record writes s on rj. With holdCompletion a Complete is left for later
// (the pod is deleted first).
func (r *Reconciler) record(ctx context.Context, rj *v1alpha1.RunJob, s runplan.Status, holdCompletion bool) error {
	now := metav1.NewTime(r.cfg.Clock.Now())
	return r.writeStatus(ctx, rj, func(st *v1alpha1.RunJobStatus) {
		if s.State != "" {
			st.State = v1alpha1.State(s.State)
		}
		if s.State == runplan.StatePending {
			st.PodName = podName(rj)
		}
		if s.Description != "" {
			st.Description = s.Description
		}
		if !s.PendingTime.IsZero() {
			st.PendingTime = &metav1.Time{Time: s.PendingTime}
		}
		if s.Revivals != nil {
			st.Revivals, st.RevivedPodUID = int32(s.Revivals.Count), s.Revivals.Pod
		}
		if s.Complete && !holdCompletion {
			st.CompletionTime = &now
		}
	})
}

// supersede records StateAborted and the description on the run s names, as
// the cache shows it; that run's own sync deletes its pod and completes it.
func (r *Reconciler) supersede(ctx context.Context, runs *v1alpha1.RunJobList, s runplan.Supersession) error {
	for i := range runs.Items {
		if o := &runs.Items[i]; o.UID == s.UID {
			log.FromContext(ctx).Info("Aborting superseded run", "run", o.Name)
			return r.writeStatus(ctx, o.DeepCopy(), func(st *v1alpha1.RunJobStatus) {
				st.State, st.Description = v1alpha1.StateAborted, s.Description
			})
		}
	}
	return nil
}

// podEffects applies what the plan asks of the pod: release the reporter
// finalizers, then delete it (with its UID as a precondition when known, so
// that a replacement with the same name survives), ignoring a pod already gone.
func (r *Reconciler) podEffects(ctx context.Context, rj *v1alpha1.RunJob, e runplan.PodEffects) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rj.Namespace, Name: podName(rj), UID: e.UID}}
	if e.ReleaseFinalizers && len(r.cfg.ReporterFinalizers) > 0 {
		if err := r.releaseFinalizers(ctx, pod); err != nil {
			return err
		}
	}
	if !e.Delete {
		return nil
	}
	var opts []client.DeleteOption
	if e.UID != "" {
		opts = append(opts, client.Preconditions{UID: &e.UID})
	}
	err := r.client.Delete(ctx, pod, opts...)
	if apierrors.IsNotFound(err) || (e.UID != "" && apierrors.IsConflict(err)) {
		return nil
	}
	if err == nil {
		log.FromContext(ctx).Info("Deleted pod", "pod", pod.Name)
	}
	return err
}

// releaseFinalizers removes Config.ReporterFinalizers from the pod named like
// pod (with the same UID), reading it from the cache.
func (r *Reconciler) releaseFinalizers(ctx context.Context, pod *corev1.Pod) error {
	var cur corev1.Pod
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(pod), &cur); err != nil {
		return client.IgnoreNotFound(err)
	}
	if pod.UID != "" && cur.UID != pod.UID {
		return nil
	}
	kept := make([]string, 0, len(cur.Finalizers))
	for _, f := range cur.Finalizers {
		if !containsString(r.cfg.ReporterFinalizers, f) {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(cur.Finalizers) {
		return nil
	}
	updated := cur.DeepCopy()
	updated.Finalizers = kept
	err := r.client.Patch(ctx, updated, client.MergeFromWithOptions(&cur, client.MergeFromWithOptimisticLock{}))
	if err == nil {
		log.FromContext(ctx).Info("Released finalizers", "pod", cur.Name, "finalizers", r.cfg.ReporterFinalizers)
	}
	return client.IgnoreNotFound(err)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// getPod returns the run's pod from the cache, or nil when there is none.
func (r *Reconciler) getPod(ctx context.Context, rj *v1alpha1.RunJob) (*corev1.Pod, error) {
	var pod corev1.Pod
	err := r.client.Get(ctx, types.NamespacedName{Namespace: rj.Namespace, Name: podName(rj)}, &pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &pod, nil
}

// createPod creates the run's pod and waits until the pod cache has it, or the
// next sync would find no pod and create it again.
func (r *Reconciler) createPod(ctx context.Context, rj *v1alpha1.RunJob) error {
	pod := newPod(rj)
	if err := r.client.Create(ctx, pod); err != nil {
		return err
	}
	log.FromContext(ctx).Info("Created pod", "pod", pod.Name)
	key := client.ObjectKeyFromObject(pod)
	read := func(ctx context.Context) (string, error) {
		var cached corev1.Pod
		if err := r.client.Get(ctx, key, &cached); err != nil {
			return "", err
		}
		return cached.ResourceVersion, nil
	}
	return reconcile.WaitForCacheSync(ctx, "Pod "+key.String(), pod.ResourceVersion, read, r.cfg.CacheSync)
}

// writeStatus applies mutate to a copy of rj's status and, when that changes
// it, writes it (with rj's resourceVersion as precondition), waits until the
// cache shows the write, and then updates rj in place. rj is a copy owned by
// this reconcile, never an object shared with the cache.
func (r *Reconciler) writeStatus(ctx context.Context, rj *v1alpha1.RunJob, mutate func(*v1alpha1.RunJobStatus)) error {
	updated := rj.DeepCopy()
	mutate(&updated.Status)
	if equality.Semantic.DeepEqual(updated.Status, rj.Status) {
		return nil
	}
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

func (r *Reconciler) limits() concurrency.Limits {
	return concurrency.Limits{MaxPending: r.cfg.MaxPending, Queues: r.cfg.Queues, RetryAfter: r.cfg.RetryAfter}
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

// runOf maps a RunJob onto runplan's plain run.
func runOf(rj *v1alpha1.RunJob) runplan.Run {
	return runplan.Run{
		UID:            rj.UID,
		Name:           rj.Name,
		JobName:        rj.Spec.JobName,
		Queue:          rj.Spec.QueueName,
		MaxConcurrency: int(rj.Spec.MaxConcurrency),
		DedupeKey:      rj.Spec.DedupeKey,
		State:          runplan.State(rj.Status.State),
		Description:    rj.Status.Description,
		Created:        rj.CreationTimestamp.Time,
		StartTime:      timeOf(rj.Status.StartTime),
		PendingTime:    timeOf(rj.Status.PendingTime),
		Completed:      rj.Status.CompletionTime != nil,
		HadPod:         rj.Status.PodName != "",
		Revivals:       podoutcome.Revivals{Count: int(rj.Status.Revivals), Pod: rj.Status.RevivedPodUID},
	}
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
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
