package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
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
// child Jobs and its Service from the manager's cache, computes a childjobs.Plan
// and executes it (execute.go). It implements controller-runtime's
// reconcile.Reconciler; Setup builds and registers it.
type Controller struct {
	writer client.Client
	cache  client.Reader
	opts   Options
	log    logr.Logger

	mu      sync.Mutex
	written map[types.NamespacedName]watermark // the last status written to each JobSet
}

// jobSets is the custom resource the controller needs.
var jobSets = crd.Resource{
	Kind:      v1alpha2.SchemeGroupVersion.WithKind("JobSet"),
	CRD:       "jobsets." + v1alpha2.GroupName,
	Manifests: "examples/jobset/config/crd/",
}

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
	opts.ManagedBy = cmp.Or(opts.ManagedBy, plaingroup.ControllerName)
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = mgr.GetLogger().WithName(ControllerName)
	}
	if opts.Events == nil {
		rec, err := jkcr.EventRecorder(mgr, opts.ManagedBy)
		if err != nil {
			return nil, fmt.Errorf("jobset: Setup: %w", err)
		}
		opts.Events = rec
	}
	c := &Controller{writer: mgr.GetClient(), cache: mgr.GetCache(), opts: opts, log: opts.Logger, written: map[types.NamespacedName]watermark{}}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &batchv1.Job{}, JobOwnerIndex, jkcr.OwnerUID); err != nil {
		return nil, fmt.Errorf("jobset: Setup: index Jobs by controller UID: %w", err)
	}
	managed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		js, ok := o.(*v1alpha2.JobSet)
		return ok && c.Manages(js)
	})
	err := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha2.JobSet{}, builder.WithPredicates(managed)).
		Owns(&batchv1.Job{}).
		Owns(&corev1.Service{}).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(opts.Workers, 5),
			SkipNameValidation:      ptr.To(opts.SkipNameValidation),
			RateLimiter:             apiLimiter(opts.APIBackoff),
		}).
		Complete(c)
	if err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	return c, nil
}

// Manages reports whether the controller syncs js: its spec.managedBy is
// Options.ManagedBy, or unset while Options.ManagedBy is JobSet's reserved name.
func (c *Controller) Manages(js *v1alpha2.JobSet) bool {
	return (&plaingroup.Spec{ManagedBy: ptr.Deref(js.Spec.ManagedBy, "")}).HandledBy(c.opts.ManagedBy)
}

// Reconcile syncs one JobSet. One missing from the cache is forgotten. One whose
// status in the cache is older than the last this controller wrote is looked at
// again once the cache has caught up. An invalid one fails (Failed, reason
// ReasonInvalid, and a Warning event) with no child, and its TTL after
// finishing applies. Write errors are returned
// for the workqueue to retry with rate limiting; RequeueAfter is the Plan's.
func (c *Controller) Reconcile(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
	js := &v1alpha2.JobSet{}
	if err := c.cache.Get(ctx, req.NamespacedName, js); err != nil {
		if client.IgnoreNotFound(err) == nil {
			c.forget(req.NamespacedName)
			return crreconcile.Result{}, nil
		}
		return crreconcile.Result{}, err
	}
	if !c.Manages(js) || js.DeletionTimestamp != nil {
		return crreconcile.Result{}, nil
	}
	if c.stale(js) {
		// Our last status write is not in the cache yet: a sync now would plan
		// from counters we have already moved past. Its update event queues the
		// JobSet again; the requeue is the safety net.
		return crreconcile.Result{RequeueAfter: time.Second}, nil
	}
	if errs := Validate(js); len(errs) > 0 {
		return c.refuse(ctx, js, errs)
	}
	return c.sync(ctx, js)
}

// progress is the sum of a status' restart counters, which never go down: a
// cached status with less is older than one written with more.
func progress(s *v1alpha2.JobSetStatus) int64 {
	n := int64(s.Restarts)
	for _, r := range s.ReplicatedJobsStatus {
		for _, x := range r.JobRestarts {
			n += int64(x)
		}
	}
	if s.TerminalState != "" {
		n++
	}
	return n
}

// watermark is the progress of the last status written to one JobSet.
type watermark struct {
	uid      types.UID
	progress int64
}

func (c *Controller) stale(js *v1alpha2.JobSet) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.written[client.ObjectKeyFromObject(js)]
	return ok && w.uid == js.UID && progress(&js.Status) < w.progress
}

func (c *Controller) wrote(js *v1alpha2.JobSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written[client.ObjectKeyFromObject(js)] = watermark{uid: js.UID, progress: progress(&js.Status)}
}

// forget drops what the controller remembers of the JobSet of key.
func (c *Controller) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.written, key)
}

// apiLimiter is the controller's rate limiter for b (client-go's exponential
// failure rate limiter per JobSet, as the Job controller's); zero fields are 1s and
// 1m.
func apiLimiter(b plainbackoff.Policy) workqueue.TypedRateLimiter[crreconcile.Request] {
	base := cmp.Or(b.Base, time.Second)
	return workqueue.NewTypedItemExponentialFailureRateLimiter[crreconcile.Request](base, max(cmp.Or(b.Max, time.Minute), base))
}
