package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/crd"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/groups/childjobs"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	// ControllerName names the controller in controller-runtime's logs and
	// metrics.
	ControllerName = "jobset"
	// JobOwnerIndex is the field index of Jobs by the UID of their controller.
	JobOwnerIndex = "jobset.examples.jobkit.dev/controller-uid"
	// ReasonInvalid is the reason of the Warning event and of the Failed
	// condition of a JobSet that plain/group's Validate refuses.
	ReasonInvalid = "InvalidJobSet"
)

// Event actions (events.k8s.io/v1 Event.action) of the controller's events.
const (
	ActionSync   = "SyncJobSet"
	ActionCreate = "CreateJob"
	ActionDelete = "DeleteJob"
)

// Kind is the API type of the JobSets this controller syncs: the controller
// reference of their children.
var Kind = v1alpha2.SchemeGroupVersion.WithKind("JobSet")

// Options configure Setup.
type Options struct {
	// ManagedBy is the spec.managedBy of the JobSets this controller syncs; empty
	// means plaingroup.ControllerName, which also takes the JobSets without
	// managedBy, as JobSet's own controller does.
	ManagedBy string
	// ChildManagedBy, when set, is the spec.managedBy of the child Jobs created,
	// so that the Job controller of that name (a jobkit one) runs them; empty
	// leaves them to the kube-controller-manager.
	ChildManagedBy string
	// Workers is how many JobSets are synced at once; zero means 5.
	Workers int
	// APIBackoff is the requeue delay of a JobSet whose sync failed on an API
	// error: Base, doubled at each failure in a row, at most Max; zero fields mean
	// the Job controller's 1s and 1m.
	APIBackoff plainbackoff.Policy
	// SkipNameValidation lets several managers in one process register the
	// controller (tests that restart it).
	SkipNameValidation bool
	// Clock is the time of each sync; nil means the real clock.
	Clock clock.PassiveClock
	// Events records the events of each sync; nil means an events.k8s.io/v1
	// recorder on the manager's connection, reporting as ManagedBy.
	Events events.EventRecorder
	// Logger is the controller's; the zero Logger means the manager's.
	Logger logr.Logger
}

// Controller syncs the JobSets it manages: each sync reads the JobSet, its
// child Jobs and its Service from the manager's cache, converts them
// (convert.go) and hands them to reconcile.Reconciler.SyncChildJobs, which plans
// and executes the sync through the manager's client. It implements
// controller-runtime's reconcile.Reconciler; Setup builds and registers it.
type Controller struct {
	api   api
	cache client.Reader
	opts  Options
	rec   *reconcile.Reconciler
}

// jobSets is the custom resource the controller needs.
var jobSets = crd.Resource{Kind: Kind, CRD: "jobsets." + v1alpha2.GroupName, Manifests: "examples/jobset/config/crd/"}

// Setup builds the controller and registers it with mgr, whose scheme must hold
// v1alpha2 and the built-in types: the field index JobOwnerIndex on Jobs, and a
// controller of the JobSets opts.ManagedBy names that owns their Jobs and
// Services (an event of one queues its JobSet). It asks the API server whether it
// serves JobSets: without the CRD it fails at once with an error that names it and
// says how to install it (wrapping the RESTMapper's NoKindMatchError, which
// meta.IsNoMatchError reports), where the manager would otherwise wait for its
// caches and fail with a timeout.
func Setup(mgr manager.Manager, opts Options) (*Controller, error) {
	if mgr == nil {
		return nil, errors.New("jobset: Setup: manager is nil")
	}
	if err := crd.Require(mgr.GetRESTMapper(), jobSets); err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	if opts.Workers < 0 {
		return nil, fmt.Errorf("jobset: Setup: Workers %d: must not be negative", opts.Workers)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = mgr.GetLogger().WithName(ControllerName)
	}
	if opts.Events == nil {
		rec, err := jkcr.EventRecorder(mgr, cmp.Or(opts.ManagedBy, plaingroup.ControllerName))
		if err != nil {
			return nil, fmt.Errorf("jobset: Setup: %w", err)
		}
		opts.Events = rec
	}
	c, err := newController(mgr.GetClient(), mgr.GetCache(), opts)
	if err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &batchv1.Job{}, JobOwnerIndex, jkcr.OwnerUID); err != nil {
		return nil, fmt.Errorf("jobset: Setup: index Jobs by controller UID: %w", err)
	}
	managed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		js, ok := o.(*v1alpha2.JobSet)
		return ok && c.Manages(js)
	})
	err = builder.ControllerManagedBy(mgr).Named(ControllerName).
		For(&v1alpha2.JobSet{}, builder.WithPredicates(managed)).Owns(&batchv1.Job{}).Owns(&corev1.Service{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(opts.Workers, 5),
			SkipNameValidation:      ptr.To(opts.SkipNameValidation),
			RateLimiter:             apiLimiter(opts.APIBackoff),
		}).Complete(c)
	if err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	return c, nil
}

// newController is the Controller of writer and cache, with opts' defaults
// filled in.
func newController(writer client.Client, cache client.Reader, opts Options) (*Controller, error) {
	opts.ManagedBy = cmp.Or(opts.ManagedBy, plaingroup.ControllerName)
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	ev := opts.Events
	rec, err := reconcile.New(reconcile.Config{Name: opts.ManagedBy, Clock: opts.Clock, Logger: opts.Logger,
		Events: reconcile.EventRecorderFunc(func(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
			action := map[string]string{reconcile.ReasonFailedCreate: ActionCreate, reconcile.ReasonFailedDelete: ActionDelete}[reason]
			ev.Eventf(obj, nil, eventtype, reason, cmp.Or(action, ActionSync), messageFmt, args...)
		}),
	}, nil, nil)
	return &Controller{api: api{writer}, cache: cache, opts: opts, rec: rec}, err
}

// Manages reports whether the controller syncs js: its spec.managedBy is
// Options.ManagedBy, or unset while Options.ManagedBy is JobSet's reserved name.
func (c *Controller) Manages(js *v1alpha2.JobSet) bool {
	return (&plaingroup.Spec{ManagedBy: ptr.Deref(js.Spec.ManagedBy, "")}).HandledBy(c.opts.ManagedBy)
}

// Reconcile syncs one JobSet. One missing from the cache is forgotten. An
// invalid one fails (Failed, reason ReasonInvalid, and a Warning event) with no
// child, and its TTL after finishing applies. The rest is SyncChildJobs's: write
// errors are returned for the workqueue to retry with rate limiting;
// RequeueAfter is the sync's.
func (c *Controller) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	js := &v1alpha2.JobSet{}
	if err := c.cache.Get(ctx, req.NamespacedName, js); err != nil {
		if apierrors.IsNotFound(err) {
			c.rec.Forget(reconcile.Key(req.Namespace, req.Name))
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	if !c.Manages(js) || js.DeletionTimestamp != nil {
		return crreconcile.Result{}, nil
	}
	if errs := Validate(js); len(errs) > 0 {
		return c.refuse(ctx, js, errs)
	}
	var jobs batchv1.JobList
	// No deep copy: nothing modifies the children.
	if err := c.cache.List(ctx, &jobs, client.InNamespace(js.Namespace), client.MatchingFields{JobOwnerIndex: string(js.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return crreconcile.Result{}, fmt.Errorf("listing the Jobs of %s/%s: %w", js.Namespace, js.Name, err)
	}
	children := make([]*batchv1.Job, len(jobs.Items))
	for i := range jobs.Items {
		children[i] = &jobs.Items[i]
	}
	subdomain := js.Name
	if n := js.Spec.Network; n != nil && n.Subdomain != "" {
		subdomain = n.Subdomain
	}
	err := c.cache.Get(ctx, types.NamespacedName{Namespace: js.Namespace, Name: subdomain}, &corev1.Service{})
	if client.IgnoreNotFound(err) != nil {
		return crreconcile.Result{}, fmt.Errorf("reading the Service of %s/%s: %w", js.Namespace, js.Name, err)
	}
	in := Input(js, children, err == nil, c.opts.ManagedBy, c.opts.ChildManagedBy, c.opts.Clock.Now())
	res, err := c.rec.SyncChildJobs(ctx, in, c.api, c.api)
	return crreconcile.Result{RequeueAfter: res.RequeueAfter}, err
}

// Validate checks a JobSet's spec with plain/group's Validate, the roles sized
// from their templates (parallelism, with the API's default of 1, and
// completions). Each error names the field and the value.
func Validate(js *v1alpha2.JobSet) plaingroup.Errors {
	spec := Spec(js)
	for i := range spec.Roles {
		t := &js.Spec.ReplicatedJobs[i].Template.Spec
		spec.Roles[i].Parallelism = ptr.Deref(t.Parallelism, 1)
		spec.Roles[i].Completions = t.Completions
	}
	return plaingroup.Validate(&spec)
}

// refuse fails an invalid JobSet once: a Failed condition of reason
// ReasonInvalid with the errors, terminalState Failed, and a Warning event. Its
// spec's rules are immutable, so it can never become valid; failing it shows
// why in kubectl. Once failed, its TTL after finishing applies (plaingroup.TTL):
// it is deleted (foreground) once expired, looked at again when it will.
func (c *Controller) refuse(ctx context.Context, js *v1alpha2.JobSet, errs plaingroup.Errors) (crreconcile.Result, error) {
	if cond := meta.FindStatusCondition(js.Status.Conditions, "Failed"); cond != nil && cond.Reason == ReasonInvalid {
		return c.expire(ctx, js, cond)
	}
	updated := js.DeepCopy()
	meta.SetStatusCondition(&updated.Status.Conditions, metav1.Condition{
		Type: "Failed", Status: metav1.ConditionTrue, Reason: ReasonInvalid, Message: errs.Error(),
		ObservedGeneration: js.Generation, LastTransitionTime: metav1.NewTime(c.opts.Clock.Now()),
	})
	updated.Status.TerminalState = v1alpha2.Failed
	if err := c.api.Status().Update(ctx, updated); err != nil {
		return crreconcile.Result{}, fmt.Errorf("failing the invalid JobSet %s/%s: %w", js.Namespace, js.Name, err)
	}
	c.opts.Events.Eventf(js, nil, corev1.EventTypeWarning, ReasonInvalid, ActionSync, "%s", errs.Error())
	return crreconcile.Result{}, nil
}

// expire applies the TTL after finishing of a JobSet refused as invalid, failed
// by cond.
func (c *Controller) expire(ctx context.Context, js *v1alpha2.JobSet, cond *metav1.Condition) (crreconcile.Result, error) {
	failed := []plaingroup.Condition{{Type: cond.Type, Status: plaingroup.True, Reason: cond.Reason, LastTransitionTime: cond.LastTransitionTime.Time}}
	e, err := plaingroup.TTL(js.Spec.TTLSecondsAfterFinished, failed, js.DeletionTimestamp != nil, c.opts.Clock.Now())
	switch {
	case err != nil || (!e.Expired && e.Left <= 0):
		return crreconcile.Result{}, nil // no TTL, or one the CRD's schema refuses
	case !e.Expired:
		return crreconcile.Result{RequeueAfter: e.Left}, nil
	}
	err = c.api.DeleteGroup(ctx, &childjobs.Input{Object: js, UID: js.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return crreconcile.Result{}, fmt.Errorf("deleting %s/%s (ttlSecondsAfterFinished expired): %w", js.Namespace, js.Name, err)
	}
	return crreconcile.Result{}, nil
}

// apiLimiter is the controller's rate limiter for b (client-go's exponential
// failure rate limiter per JobSet, as the Job controller's); zero fields are 1s and
// 1m.
func apiLimiter(b plainbackoff.Policy) workqueue.TypedRateLimiter[crreconcile.Request] {
	base := cmp.Or(b.Base, time.Second)
	return workqueue.NewTypedItemExponentialFailureRateLimiter[crreconcile.Request](base, max(cmp.Or(b.Max, time.Minute), base))
}
