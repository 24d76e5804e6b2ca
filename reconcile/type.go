package reconcile

import (
	"cmp"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/finalizers"
	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// Type describes an owner type T (a pointer type such as *batchv1.Job or a
// custom resource's *TrainingJob): the conversions that depend on the Go type,
// written once and read by everything that handles owners of T: the
// controller-runtime integration's Setup, the test rig's owner store
// (reconciletest), and any integration built on them. JobType is the one of
// batch/v1 Jobs. A Type is read-only once built; its methods are safe for
// concurrent use when its functions are.
type Type[T interface {
	metav1.Object
	runtime.Object
}] struct {
	// New returns an empty T to read into. Required.
	New func() T
	// Workload converts a Job-shaped owner onto the workload Sync takes; it must
	// not modify it (it comes from a cache). An error means the owner cannot be
	// synced: it gets a Warning event of reason "Invalid" + the owner's kind and
	// no retry. Required unless Roles is set; with Roles set and Workload nil, the
	// kind holds only owners of roles (an owner Roles answers nil for is refused
	// as Workload's error would be).
	Workload func(obj T) (*plan.Workload, error)
	// SetStatus sets status as obj's status. obj is a copy the caller owns; it is
	// then written through the status subresource with the Workload's
	// resourceVersion as precondition, and what the API server stored is converted
	// back with Workload. Required with Workload, and only with it.
	SetStatus func(obj T, status batchv1.JobStatus)
	// ManagedBy returns obj's spec.managedBy, nil when unset: the owners
	// plan.Workload.HandledBy the controller's name are synced (an unset managedBy
	// is any controller's for a kind other than batch/v1 Job). Nil reads it
	// through the conversions, and an owner they refuse is then left alone
	// silently.
	ManagedBy func(obj T) *string
	// Roles, when set, tells an owner of several roles (a launcher and workers)
	// from a Job-shaped one: it converts obj onto the ownedpods.Workload that
	// Reconciler.SyncRoles takes, or returns nil (and no error) when obj is one
	// workload, which Workload then converts. It must not modify obj. An error is
	// treated as Workload's. Every other reader of an owner (owner events, the
	// orphan cleanup, the metrics, Config.ReadOwner) sees a roles owner as
	// ownedpods.Workload.AsWorkload presents it: never finished. Nil: every owner
	// is one workload.
	Roles func(obj T) (*ownedpods.Workload, error)
	// SetRolesStatus sets status as the status of obj, a roles owner: as
	// SetStatus, for the owners Roles converts, whose status is then converted
	// back with Roles. An error (a status obj cannot hold) fails the sync with no
	// pod call made. Required with Roles, and only with it.
	SetRolesStatus func(obj T, status ownedpods.Status) error
	// ChildJobs, when set, tells a group whose roles run as child Jobs from the
	// other shapes: it converts obj onto the childjobs.Input that
	// Reconciler.SyncChildJobs takes (identity, ResourceVersion, Object, Owner,
	// Deleting, Spec, Templates, Suspend, the network settings and Status),
	// or returns nil (and no error) when obj is of another shape. The caller of
	// SyncChildJobs fills Children, ServiceExists, ControllerName, ChildManagedBy
	// and Now. It must not modify obj. An error is treated as Workload's. Such an
	// owner owns no pods (its child Jobs do): every other reader of an owner
	// sees it as Owner presents it, never finished, so the orphan cleanup and
	// the pod-event mapping find no pod of it and touch none.
	ChildJobs func(obj T) (*childjobs.Input, error)
	// SetChildJobsStatus sets status as the status of obj, a child-Jobs group:
	// as SetRolesStatus, for the owners ChildJobs converts, whose status is then
	// converted back with ChildJobs. Required with ChildJobs, and only with it.
	SetChildJobsStatus func(obj T, status childjobs.Status) error
	// ChildJobTemplates, for a Type with ChildJobs, returns the Job templates
	// of obj's roles as pointers into obj (spec.replicatedJobs[i].template),
	// one per role of ChildJobs' Input, in its order: Input.Templates are
	// copies for a sync, these are where an integration that changes the
	// owner's spec writes (the Kueue integration merges the admitted
	// flavour's node selectors and tolerations into them and restores them).
	// The controller never calls it. Nil: no such integration can change a
	// group's templates.
	ChildJobTemplates func(obj T) []*batchv1.JobTemplateSpec
	// SetSuspend sets obj's spec.suspend, whatever its shape: obj is a copy the
	// caller owns, written back as an update of the spec. The controller never
	// calls it (it reads suspend through the conversions); integrations that
	// start and stop owners from outside do: the Kueue integration
	// (github.com/jobkit/jobkit/kueue) requires it. Nil: no such integration
	// can stop an owner.
	SetSuspend func(obj T, suspend bool)
	// SetManagedBy sets obj's spec.managedBy (nil unsets it), on a copy the
	// caller owns, as SetSuspend. The controller never calls it; the Kueue
	// integration's webhook does, to hand an owner queued for MultiKueue to
	// MultiKueue's controller. Nil: no integration changes who manages an
	// owner.
	SetManagedBy func(obj T, managedBy *string)
}

// JobType is the Type of batch/v1 Jobs: plan.JobWorkload is the conversion, the
// status is the Job's own. A Job controller uses it with a Config whose Owner is
// owner.BatchJob; like upstream, it adopts the orphan pods its Jobs' selectors
// match.
var JobType = Type[*batchv1.Job]{
	New:          func() *batchv1.Job { return &batchv1.Job{} },
	Workload:     func(job *batchv1.Job) (*plan.Workload, error) { return plan.JobWorkload(job), nil },
	SetStatus:    func(job *batchv1.Job, status batchv1.JobStatus) { job.Status = status },
	ManagedBy:    func(job *batchv1.Job) *string { return job.Spec.ManagedBy },
	SetSuspend:   func(job *batchv1.Job, suspend bool) { job.Spec.Suspend = &suspend },
	SetManagedBy: func(job *batchv1.Job, managedBy *string) { job.Spec.ManagedBy = managedBy },
}

// Validate names every missing or inconsistent function of t, each error
// naming the field (prefixed "Type.").
func (t *Type[T]) Validate() error {
	var errs []error
	if t.New == nil {
		errs = append(errs, errors.New("Type.New is not set: it is required"))
	}
	if (t.Workload == nil) != (t.SetStatus == nil) {
		errs = append(errs, fmt.Errorf("Type: Workload set %v, SetStatus set %v: set both or neither", t.Workload != nil, t.SetStatus != nil))
	}
	if (t.Roles == nil) != (t.SetRolesStatus == nil) {
		errs = append(errs, fmt.Errorf("Type: Roles set %v, SetRolesStatus set %v: set both or neither", t.Roles != nil, t.SetRolesStatus != nil))
	}
	if (t.ChildJobs == nil) != (t.SetChildJobsStatus == nil) {
		errs = append(errs, fmt.Errorf("Type: ChildJobs set %v, SetChildJobsStatus set %v: set both or neither", t.ChildJobs != nil, t.SetChildJobsStatus != nil))
	}
	if t.ChildJobTemplates != nil && t.ChildJobs == nil {
		errs = append(errs, errors.New("Type.ChildJobTemplates is set, Type.ChildJobs is not: only groups of child Jobs have Job templates"))
	}
	if t.Workload == nil && t.Roles == nil && t.ChildJobs == nil {
		errs = append(errs, errors.New("Type: none of Workload, Roles and ChildJobs is set: set Workload and SetStatus for Job-shaped owners, Roles and SetRolesStatus for owners of several roles, ChildJobs and SetChildJobsStatus for groups of child Jobs, or several"))
	}
	return errors.Join(errs...)
}

// ChildJobsOnly reports whether every owner of t is a group of child Jobs:
// ChildJobs is set, Workload and Roles are not. Such a kind owns no pods: an
// integration needs no pod watch and no orphan cleanup for it.
func (t *Type[T]) ChildJobsOnly() bool {
	return t.ChildJobs != nil && t.Workload == nil && t.Roles == nil
}

// Shape returns obj in the shape it has: a group of child Jobs (ChildJobs set
// and answering one), else an owner of roles (Roles set and answering one),
// else the one workload of Workload. Exactly one of the three results is set
// when the error is nil.
func (t *Type[T]) Shape(obj T) (*plan.Workload, *ownedpods.Workload, *childjobs.Input, error) {
	if t.ChildJobs != nil {
		in, err := t.ChildJobs(obj)
		if err != nil {
			return nil, nil, nil, err
		}
		if in != nil {
			return nil, nil, in, nil
		}
	}
	if t.Roles != nil {
		g, err := t.Roles(obj)
		if err != nil {
			return nil, nil, nil, err
		}
		if g != nil {
			return nil, g, nil, nil
		}
	}
	if t.Workload == nil {
		return nil, nil, nil, fmt.Errorf("%w: Type.ChildJobs and Type.Roles answered no group for %s/%s, and Type.Workload is not set",
			ErrInvalidArgument, obj.GetNamespace(), obj.GetName())
	}
	w, err := t.Workload(obj)
	return w, nil, nil, err
}

// Owner returns obj as the one plan.Workload that every reader of an owner but
// its sync sees (owner events, the pod-event mapping, the orphan cleanup, the
// metrics, Config.ReadOwner), whatever its shape: a Job-shaped owner's
// Workload, an owner of roles as ownedpods.Workload.AsWorkload presents it, or
// a group of child Jobs as its identity (namespace, name, UID, generation,
// resourceVersion, Object, deletion) with no spec but its managedBy, an unset
// one read as the group rule reads it (plaingroup.ControllerName, JobSet's),
// and no status: never finished, owning no pods.
func (t *Type[T]) Owner(obj T) (*plan.Workload, error) {
	w, g, in, err := t.Shape(obj)
	switch {
	case err != nil || w != nil:
		return w, err
	case g != nil:
		return g.AsWorkload(), nil
	}
	return &plan.Workload{
		Namespace: in.Namespace, Name: in.Name, UID: in.UID, Generation: in.Generation,
		ResourceVersion: in.ResourceVersion, Object: in.Object, Deleting: in.Deleting,
		Spec: plan.Spec{ManagedBy: ptr.To(cmp.Or(in.Spec.ManagedBy, plaingroup.ControllerName))},
	}, nil
}

// Handles reports whether the controller named controller syncs obj, an owner
// of kind: plan.Workload.HandledBy over its managedBy (ManagedBy, or Owner's
// when ManagedBy is nil; an owner the conversions refuse is not handled). For
// a kind of child-Jobs groups only (ChildJobsOnly), an unset managedBy reads
// as the group rule reads it: JobSet's controller's, plaingroup.ControllerName.
// A Type of several shapes whose groups follow that rule leaves ManagedBy nil.
func (t *Type[T]) Handles(obj T, controller string, kind owner.Kind) bool {
	var w *plan.Workload
	if t.ManagedBy != nil {
		w = &plan.Workload{Spec: plan.Spec{ManagedBy: t.ManagedBy(obj)}}
	} else {
		var err error
		if w, err = t.Owner(obj); err != nil {
			return false
		}
	}
	if t.ChildJobsOnly() {
		// JobSet's rule, whose one home is plain/group.
		return (&plaingroup.Spec{ManagedBy: ptr.Deref(w.Spec.ManagedBy, "")}).HandledBy(controller)
	}
	return w.HandledBy(controller, kind)
}

// OrphanOwner returns what the orphan cleanup and the pod-event mapping read of
// obj, a live owner of kind (plan.Workload.OrphanOwner over Owner). An owner the
// conversions refuse has no pods of a controller: it counts as unfinished,
// managed as its managedBy says. A group of child Jobs counts as unfinished
// too: it controls no pod, so the cleanup, which reads only the pods a live
// owner controls, removes no finalizer on its account (and its managedBy, unset
// or not, names no pod's controller).
func (t *Type[T]) OrphanOwner(obj T, kind owner.Kind) *finalizers.OrphanOwner {
	w, err := t.Owner(obj)
	if err != nil {
		w = &plan.Workload{}
		if t.ManagedBy != nil {
			w.Spec.ManagedBy = t.ManagedBy(obj)
		}
	}
	f := w.OrphanOwner(kind)
	f.UID = obj.GetUID()
	return f
}
