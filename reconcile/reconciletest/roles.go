package reconciletest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

// validateRolesStatus checks the update of old to st against the rules a CRD of
// an owner of several roles states.
func validateRolesStatus(old, st *ownedpods.Status) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status")
	never := "must not decrease"
	if st.Restarts < old.Restarts {
		errs = append(errs, field.Invalid(p.Child("restarts"), st.Restarts, never))
	}
	if st.RestartsCountTowardsMax < old.RestartsCountTowardsMax {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, never))
	}
	if st.RestartsCountTowardsMax > st.Restarts {
		errs = append(errs, field.Invalid(p.Child("restartsCountTowardsMax"), st.RestartsCountTowardsMax, fmt.Sprintf("must not exceed restarts (%d)", st.Restarts)))
	}
	if o, n := old.InPlace.Previous, st.InPlace.Previous; o != nil && (n == nil || *n < *o) {
		errs = append(errs, field.Invalid(p.Child("inPlace", "previous"), n, never))
	}
	if old.TerminalState != "" && st.TerminalState != old.TerminalState {
		errs = append(errs, field.Invalid(p.Child("terminalState"), st.TerminalState, fmt.Sprintf("must not change once set (%q)", old.TerminalState)))
	}
	for i, r := range st.Roles {
		for _, o := range old.Roles {
			if o.Name != r.Name {
				continue
			}
			rp := p.Child("roles").Index(i)
			if r.Attempt < o.Attempt {
				errs = append(errs, field.Invalid(rp.Child("attempt"), r.Attempt, never))
			}
			if r.Succeeded < o.Succeeded {
				errs = append(errs, field.Invalid(rp.Child("succeeded"), r.Succeeded, never))
			}
			if r.Failed < o.Failed {
				errs = append(errs, field.Invalid(rp.Child("failed"), r.Failed, never))
			}
			if r.FailedOnTheirOwn < o.FailedOnTheirOwn {
				errs = append(errs, field.Invalid(rp.Child("failedOnTheirOwn"), r.FailedOnTheirOwn, never))
			}
		}
	}
	return errs
}

// copyRoles returns a copy of w whose status and role list are its own; the roles'
// specs and the policies are shared.
func copyRoles(w *ownedpods.Workload) *ownedpods.Workload {
	out := *w
	out.Roles = append([]ownedpods.Role(nil), w.Roles...)
	out.Status = copyRolesStatus(w.Status)
	return &out
}

func copyRolesStatus(st ownedpods.Status) ownedpods.Status {
	out := st
	out.Conditions = nil
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, *c.DeepCopy())
	}
	out.Roles = nil
	for _, r := range st.Roles {
		r.Job = *r.Job.DeepCopy()
		out.Roles = append(out.Roles, r)
	}
	if a := st.InPlace.Previous; a != nil {
		out.InPlace.Previous = ptr.To(*a)
	}
	if a := st.InPlace.Current; a != nil {
		out.InPlace.Current = ptr.To(*a)
	}
	return out
}
