package kueue

import (
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
)

// ManagedBy returns the owner's spec.managedBy (Type.ManagedBy, or as the
// conversions read it), nil when unset. MultiKueue's controller runs the
// owners whose managedBy is kueue.x-k8s.io/multikueue on a worker cluster,
// and jobkit's controller leaves them alone, as it leaves every owner another
// controller manages.
func (j *Job[T]) ManagedBy() *string {
	if j.typ.ManagedBy != nil {
		return j.typ.ManagedBy(j.obj)
	}
	v, err := j.read()
	switch {
	case err != nil:
		return nil
	case v.w != nil:
		return v.w.Spec.ManagedBy
	case v.g != nil:
		return v.g.ManagedBy
	case v.c.Spec.ManagedBy != "":
		return ptr.To(v.c.Spec.ManagedBy)
	}
	return nil
}

// SetManagedBy sets the owner's spec.managedBy through Type.SetManagedBy; it
// does nothing when the Type has none (CanDefaultManagedBy is then false).
func (j *Job[T]) SetManagedBy(managedBy *string) {
	if j.typ.SetManagedBy != nil {
		j.typ.SetManagedBy(j.obj, managedBy)
	}
}

// CanDefaultManagedBy reports whether the owner may be handed to MultiKueue's
// controller: the Type can set spec.managedBy, and it is unset or jobkit's
// controller for the kind (Options.ControllerName) handles it
// (reconcile.Type.Handles), these being its owners by default.
func (j *Job[T]) CanDefaultManagedBy() bool {
	if j.typ.SetManagedBy != nil && j.ManagedBy() == nil {
		return true
	}
	kind := owner.Kind{Group: j.gvk.Group, Version: j.gvk.Version, Kind: j.gvk.Kind}
	return j.typ.SetManagedBy != nil && j.controller != "" && j.typ.Handles(j.obj, j.controller, kind)
}
