package upstream

import (
	"cmp"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	jkcr "github.com/jobkit/jobkit/controllerruntime"
	"github.com/jobkit/jobkit/examples/internal/crd"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/reconcile"
)

// API is the API group this package serves, the value of the command's
// --api flag that selects it.
const API = "jobset.x-k8s.io"

// Kind is the API type of JobSet's JobSets: the controller reference of their
// children, as JobSet's own controller sets it.
var Kind = jobset.GroupVersion.WithKind("JobSet")

// Controller syncs JobSet's JobSets: controllerruntime's controller of
// JobSetType.
type Controller = jkcr.Controller[*jobset.JobSet]

// jobSets is the CRD the controller needs: JobSet's own, which
// hack/jobset-crd.sh finds in the module cache.
var jobSets = crd.Resource{Kind: Kind, CRD: "jobsets." + API, Manifests: "$(hack/jobset-crd.sh)"}

// Setup builds the controller of JobSet's JobSets and registers it with mgr,
// whose scheme must hold JobSet's v1alpha2 types and the built-in ones. It
// takes the example controller's Options and does what controller.Setup does
// for the example's own group: without JobSet's CRD it fails at once with an
// error that names it and how to install it (crd.IsNotInstalled); otherwise it
// is controllerruntime.Setup of JobSetType, which owns the JobSets' Jobs and
// Services and syncs the JobSets whose spec.managedBy is opts.ManagedBy (empty:
// JobSet's own name, which also takes those without managedBy; a cluster that
// runs JobSet's controller too splits the JobSets between the two by it).
func Setup(mgr manager.Manager, opts controller.Options) (*Controller, error) {
	if mgr == nil {
		return nil, errors.New("upstream: Setup: manager is nil")
	}
	if err := crd.Require(mgr.GetRESTMapper(), jobSets); err != nil {
		return nil, fmt.Errorf("upstream: Setup: %w", err)
	}
	c, err := jkcr.Setup(mgr, jkcr.Options[*jobset.JobSet]{
		Type: controller.Gated(JobSetType, opts),
		Name: controller.ControllerName,
		Config: reconcile.Config{Name: cmp.Or(opts.ManagedBy, plaingroup.ControllerName),
			Clock: opts.Clock, Events: opts.Events, Logger: opts.Logger},
		ChildManagedBy:     opts.ChildManagedBy,
		InPlaceRestart:     opts.InPlaceRestart,
		Workers:            opts.Workers,
		APIBackoff:         opts.APIBackoff,
		SkipNameValidation: opts.SkipNameValidation,
	})
	if err != nil {
		return nil, fmt.Errorf("upstream: Setup: %w", err)
	}
	return c, nil
}
