package controllerruntime

import (
	"cmp"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

const (
	// DefaultManagedBy is the spec.managedBy value this controller answers to when
	// reconcile.Config.Name is empty.
	DefaultManagedBy = "jobkit.dev/job-controller"
	// DefaultControllerName names the controller in controller-runtime's logs and
	// metrics when Options.ControllerName is empty.
	DefaultControllerName = "jobkit-job"
	// DefaultWorkers is the number of Jobs synced at once when Options.Workers is
	// zero: upstream's --concurrent-job-syncs default.
	DefaultWorkers = jkcr.DefaultWorkers
)

// Options configure the controller besides the reconcile.Config.
type Options struct {
	// Workers is how many Jobs are synced at once (MaxConcurrentReconciles); zero
	// means DefaultWorkers.
	Workers int
	// OrphanWorkers is how many orphan pods have their finalizer removed at once;
	// zero means 1.
	OrphanWorkers int
	// ControllerName names the controller (logs, workqueue metrics); empty means
	// DefaultControllerName.
	ControllerName string
	// APIBackoff is the requeue delay of a Job whose sync failed on an API error;
	// zero means 1s doubling to 1m, as upstream.
	APIBackoff plainbackoff.Policy
	// SkipNameValidation lets several managers in one process register a controller
	// of the same name (tests that restart the controller).
	SkipNameValidation bool
	// OnSync, when set, is called after each sync of a Job with what the sync
	// returned (progress output, tests). It runs on the worker and must be quick.
	OnSync func(job *batchv1.Job, res reconcile.Result, err error)
}

// Controller syncs the batch/v1 Jobs whose spec.managedBy is its name with a
// reconcile.Reconciler, on a controller-runtime manager.
type Controller = jkcr.Controller[*batchv1.Job]

// Setup registers the Job controller with mgr: jkcr.Setup with reconcile.JobType, the
// one call every jobkit controller on controller-runtime makes. An empty cfg.Name
// is DefaultManagedBy; the other zero fields of cfg get jkcr.Setup's defaults
// (the manager's logger, an events.k8s.io/v1 recorder, the job_controller_*
// metrics on controller-runtime's registry, an uncached ReadOwner).
func Setup(mgr manager.Manager, cfg reconcile.Config, opts Options) (*Controller, error) {
	cfg.Name = cmp.Or(cfg.Name, DefaultManagedBy)
	return jkcr.Setup(mgr, jkcr.Options[*batchv1.Job]{
		Type:               reconcile.JobType,
		Config:             cfg,
		Name:               cmp.Or(opts.ControllerName, DefaultControllerName),
		Workers:            opts.Workers,
		OrphanWorkers:      opts.OrphanWorkers,
		APIBackoff:         opts.APIBackoff,
		SkipNameValidation: opts.SkipNameValidation,
		OnSync:             opts.OnSync,
	})
}

// IsManagedBy reports whether job is managed by the controller named name: its
// spec.managedBy is name, or it is unset and name is batchv1.JobControllerName.
func IsManagedBy(job *batchv1.Job, name string) bool {
	return job != nil && plan.JobWorkload(job).HandledBy(name, owner.BatchJob)
}
