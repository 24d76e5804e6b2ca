package controller

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/client-go/util/workqueue"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/jobkit/jobkit/examples/plank/api/v1alpha1"
	plainconc "github.com/jobkit/jobkit/plain/concurrency"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

// Descriptions this controller writes, all decided by runplan (besides those of
// podoutcome and deadlines), in the words the runplan package doc lists; kept
// here under their old names for the readers of a RunJob's status.
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
	locks  plainconc.KeyedMutex[string]
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
		WithOptions(controller.Options{MaxConcurrentReconciles: r.cfg.Workers, RateLimiter: r.apiLimiter()}).
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
		if errors.Is(err, plaindl.ErrInvalidInput) {
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

// apiLimiter is the controller's rate limiter: Config.APIBackoff's base, doubling,
// at most its max, per RunJob (client-go's exponential failure rate limiter, as the
// Job controller's).
func (r *Reconciler) apiLimiter() workqueue.TypedRateLimiter[ctrl.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](r.cfg.APIBackoff.Base, r.cfg.APIBackoff.Max)
}
