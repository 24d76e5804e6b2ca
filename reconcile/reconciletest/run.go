package reconciletest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/reconcile"
)

// Run is an owner of several roles as an API object, the rig's own custom
// resource for tests of Reconciler.SyncRoles (a test of an operator uses its own
// type and its own reconcile.Type instead): Spec holds the roles and group rules
// in ownedpods' terms, Status the owner's status. RunType converts it; a Store
// holds Runs.
type Run struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// Spec is the owner's spec: Roles, FailurePolicy, SuccessPolicy,
	// StartupOrder, ManagedBy and Suspend are read; its identity, Deleting,
	// Generation, ResourceVersion, Object and Status are not (they are the Run's).
	Spec ownedpods.Workload
	// Status is the owner's status as last written.
	Status ownedpods.Status
}

// DeepCopyObject returns a copy of r whose metadata, role list and status are its
// own; the roles' specs and the policies are shared (do not modify them in
// place).
func (r *Run) DeepCopyObject() runtime.Object {
	out := &Run{TypeMeta: r.TypeMeta, Spec: *copyRoles(&r.Spec), Status: copyRolesStatus(r.Status)}
	r.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// RunType is the reconcile.Type of Runs: every Run is an owner of roles
// (Roles and SetRolesStatus; no Job-shaped conversion).
var RunType = reconcile.Type[*Run]{
	New: func() *Run { return &Run{} },
	Roles: func(r *Run) (*ownedpods.Workload, error) {
		w := *copyRoles(&r.Spec)
		w.Namespace, w.Name, w.UID = r.Namespace, r.Name, r.UID
		w.Deleting = r.DeletionTimestamp != nil
		w.Generation, w.ResourceVersion, w.Object = r.Generation, r.ResourceVersion, r
		w.Status = copyRolesStatus(r.Status)
		return &w, nil
	},
	SetRolesStatus: func(r *Run, st ownedpods.Status) error {
		r.Status = copyRolesStatus(st)
		return nil
	},
	ManagedBy: func(r *Run) *string { return r.Spec.ManagedBy },
}
