package controller

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

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
	// JobOwnerIndex is the field index of Jobs by the UID of their controller:
	// controllerruntime's, which its Setup registers for groups of child Jobs.
	JobOwnerIndex = jkcr.OwnerUIDIndex
	// ReasonInvalid is the reason of the Warning event and of the Failed
	// condition of a JobSet that plain/group's Validate refuses: "Invalid" and
	// the kind, as controllerruntime names it.
	ReasonInvalid = "InvalidJobSet"
)

// Event actions (events.k8s.io/v1 Event.action) of the controller's events,
// as controllerruntime names them for a kind of child-Jobs groups.
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
	// InPlaceRestart is JobSet's feature gate InPlaceRestart: on, it watches
	// the JobSets' pods and moves the in-place restart barrier of those under
	// restartStrategy InPlaceRestart from the attempts their agents report
	// (controllerruntime.Options.InPlaceRestart); off, a JobSet under
	// InPlaceRestart is refused as JobSet's webhook refuses it with the gate
	// off (plaingroup.Spec.FeatureGates): the controller fails it
	// (Failed, reason ReasonInvalid), naming
	// spec.failurePolicy.restartStrategy.
	InPlaceRestart bool
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
	Events reconcile.EventRecorder
	// Logger is the controller's; the zero Logger means the manager's.
	Logger logr.Logger
}

// Controller syncs the JobSets it manages: controllerruntime's controller of
// JobSetType, which hands each sync to reconcile.Reconciler.SyncChildJobs.
type Controller = jkcr.Controller[*v1alpha2.JobSet]

// jobSets is the custom resource the controller needs.
var jobSets = crd.Resource{Kind: Kind, CRD: "jobsets." + v1alpha2.GroupName, Manifests: "examples/jobset/config/crd/"}

// Setup builds the controller and registers it with mgr, whose scheme must hold
// v1alpha2 and the built-in types: controllerruntime.Setup of JobSetType, which
// indexes Jobs by their controller's UID (JobOwnerIndex) and owns the JobSets'
// Jobs and Services (an event of one queues its JobSet). It asks the API server
// whether it serves JobSets: without the CRD it fails at once with an error that
// names it and says how to install it (wrapping the RESTMapper's
// NoKindMatchError, which meta.IsNoMatchError reports), where the manager would
// otherwise wait for its caches and fail with a timeout.
func Setup(mgr manager.Manager, opts Options) (*Controller, error) {
	if mgr == nil {
		return nil, errors.New("jobset: Setup: manager is nil")
	}
	if err := crd.Require(mgr.GetRESTMapper(), jobSets); err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	c, err := jkcr.Setup(mgr, options(opts))
	if err != nil {
		return nil, fmt.Errorf("jobset: Setup: %w", err)
	}
	return c, nil
}

// options are controllerruntime's Options of opts. The JobSets' volume claims
// are read from the cache (ClaimsAndBudgets), so a running JobSet creates
// each once.
func options(opts Options) jkcr.Options[*v1alpha2.JobSet] {
	return jkcr.Options[*v1alpha2.JobSet]{
		Type: Gated(JobSetType, opts),
		Name: ControllerName,
		Config: reconcile.Config{Name: cmp.Or(opts.ManagedBy, plaingroup.ControllerName),
			Clock: opts.Clock, Events: opts.Events, Logger: opts.Logger},
		ChildManagedBy:     opts.ChildManagedBy,
		InPlaceRestart:     opts.InPlaceRestart,
		ClaimsAndBudgets:   true,
		Workers:            opts.Workers,
		APIBackoff:         opts.APIBackoff,
		SkipNameValidation: opts.SkipNameValidation,
	}
}

// FeatureGates are JobSet's feature gates opts says, as the JobSets are
// validated under them (plaingroup.Spec.FeatureGates): InPlaceRestart.
func (opts Options) FeatureGates() map[string]bool {
	return map[string]bool{string(plaingroup.InPlaceRestart): opts.InPlaceRestart}
}

// Gated returns t whose ChildJobs validates each group under
// opts.FeatureGates, so that the controller fails a group using a feature
// whose gate is off, as JobSet's webhook refuses it.
func Gated[T client.Object](t reconcile.Type[T], opts Options) reconcile.Type[T] {
	convert, gates := t.ChildJobs, opts.FeatureGates()
	if convert == nil {
		return t
	}
	t.ChildJobs = func(obj T) (*childjobs.Input, error) {
		in, err := convert(obj)
		if in != nil {
			in.Spec.FeatureGates = gates
		}
		return in, err
	}
	return t
}
