package group

import (
	"reflect"

	"github.com/jobkit/jobkit/plain/fielderr"
)

// ValidateUpdate checks a spec that replaces old: every error [Validate] finds in
// spec, then an error for each immutable field that changed, as JobSet's CRD
// schema and webhook reject them: the roles (their names, order, replicas,
// group names, parallelism, completions and dependsOn), the success, failure and
// startup policies, the network subdomain and managedBy. Both are compared with
// [Default] applied, so filling a default is no change. Suspension and the TTL
// may change. Elastic scaling of replicas is not covered: it is a change here.
func ValidateUpdate(old, spec *Spec) Errors {
	errs := Validate(spec)
	o, n := Default(*old), Default(*spec)
	immutable := func(field string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: field, BadValue: b, Detail: "field is immutable"})
		}
	}
	if len(o.Roles) != len(n.Roles) {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "replicatedJobs", BadValue: len(n.Roles), Detail: "field is immutable: replicatedJobs cannot be added or removed"})
	} else {
		for i := range n.Roles {
			a, b := &o.Roles[i], &n.Roles[i]
			immutable(rolePath(i, ".name"), a.Name, b.Name)
			immutable(rolePath(i, ".groupName"), a.GroupName, b.GroupName)
			immutable(rolePath(i, ".replicas"), a.Replicas, b.Replicas)
			immutable(rolePath(i, ".template.spec.parallelism"), a.Parallelism, b.Parallelism)
			immutable(rolePath(i, ".template.spec.completions"), a.Completions, b.Completions)
			immutable(rolePath(i, ".dependsOn"), a.DependsOn, b.DependsOn)
		}
	}
	immutable("successPolicy", o.SuccessPolicy, n.SuccessPolicy)
	immutable("failurePolicy", o.FailurePolicy, n.FailurePolicy)
	immutable("startupPolicy.startupPolicyOrder", o.StartupOrder, n.StartupOrder)
	immutable("network.subdomain", o.Subdomain, n.Subdomain)
	immutable("managedBy", o.ManagedBy, n.ManagedBy)
	return errs
}
