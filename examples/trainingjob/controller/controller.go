package controller

import (
	"cmp"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/crd"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/reconcile"
)

// Type is the TrainingJob's wiring for jkcr.Setup, one conversion per shape: a run
// without a launcher is one workload (Workload; its status is the Job status the
// Reconciler computes, converted), a run with a launcher a workload of two roles
// (RolesWorkload; its status is the ownedpods.Status, converted by StatusFromRoles).
var Type = reconcile.Type[*v1alpha1.TrainingJob]{
	New:       func() *v1alpha1.TrainingJob { return &v1alpha1.TrainingJob{} },
	Workload:  Workload,
	SetStatus: func(tj *v1alpha1.TrainingJob, s batchv1.JobStatus) { tj.Status = v1alpha1.StatusFromJob(s) },
	ManagedBy: func(tj *v1alpha1.TrainingJob) *string { return tj.Spec.ManagedBy },
	Roles: func(tj *v1alpha1.TrainingJob) (*ownedpods.Workload, error) {
		if tj == nil || tj.Spec.Launcher == nil {
			return nil, nil // one workload: Workload's
		}
		return RolesWorkload(tj)
	},
	SetRolesStatus: func(tj *v1alpha1.TrainingJob, s ownedpods.Status) error {
		st, err := StatusFromRoles(s)
		if err == nil {
			tj.Status = st
		}
		return err
	},
	SetSuspend:   func(tj *v1alpha1.TrainingJob, suspend bool) { tj.Spec.Suspend = &suspend },
	SetManagedBy: func(tj *v1alpha1.TrainingJob, managedBy *string) { tj.Spec.ManagedBy = managedBy },
}

// trainingJobs is the custom resource the controller needs.
var trainingJobs = crd.Resource{
	Kind:      v1alpha1.SchemeGroupVersion.WithKind("TrainingJob"),
	CRD:       "trainingjobs." + v1alpha1.GroupName,
	Manifests: "examples/trainingjob/config/crd/",
}

// Setup registers the TrainingJob controller with mgr, whose scheme must hold
// v1alpha1: jkcr.Setup with opts, whose Type is set to Type and Config.Owner to
// Kind; an empty Config.Name is DefaultManagedBy. Config.Backoff plays no part:
// each TrainingJob has its own (spec.backoff). The controller is named
// "trainingjob" unless opts.Name says otherwise, and its metrics are
// trainingjob_controller_*, served by the manager's metrics server. It asks the
// API server whether it serves TrainingJobs: without the CRD it fails with an
// error that names it and says how to install it (wrapping the RESTMapper's
// NoKindMatchError, which meta.IsNoMatchError reports).
func Setup(mgr manager.Manager, opts jkcr.Options[*v1alpha1.TrainingJob]) (*jkcr.Controller[*v1alpha1.TrainingJob], error) {
	if mgr != nil { // jkcr.Setup refuses a nil manager
		if err := crd.Require(mgr.GetRESTMapper(), trainingJobs); err != nil {
			return nil, fmt.Errorf("trainingjob: Setup: %w", err)
		}
	}
	opts.Type, opts.Config.Owner = Type, Kind
	opts.Config.Name = cmp.Or(opts.Config.Name, DefaultManagedBy)
	return jkcr.Setup(mgr, opts)
}
