package group

import (
	"reflect"

	"github.com/jobkit/jobkit/plain/fielderr"
)

// The two wordings of an immutable field JobSet gives: its webhook's, which
// is apimachinery's (replicatedJobs and managedBy), and its CRD schema's
// transition rules (the policies, the network, dependsOn).
const (
	immutableWebhook = "field is immutable"
	immutableSchema  = "Value is immutable"
)

// ValidateUpdate checks a spec that replaces old: every error [Validate] finds in
// spec, then an error for each immutable field that changed, as JobSet's CRD
// schema and webhook reject them: the roles (their names, order, replicas,
// group names, and the parallelism and completions of a NonIndexed role:
// "field is immutable", as JobSet's webhook words it; dependsOn: "Value is
// immutable", as its schema does), the success, failure and startup policies
// and the network subdomain ("Value is immutable") and managedBy ("field is
// immutable"). Each error names the field that changed under JobSet's path
// (JobSet reports any change of a role at spec.replicatedJobs). Both specs are
// compared with [Default] applied, so filling a default is no change.
// Suspension and the TTL may change. The rest of each role's template is the
// Kubernetes layer's to compare (groups/childjobs).
//
// An Indexed role is elastic, as under JobSet's ElasticJobSet gate (v0.12):
// its parallelism and completions may change while the group has not
// finished (old.Finished), each at least 1 and completions equal to
// parallelism; the children running take the new size ([Spec.Resized]). A
// change once the group has finished is Forbidden at the role's
// template.spec. The replicas of a role stay immutable, as JobSet v0.12 keeps
// them (its elastic KEP leaves them to future work); the sync handles a
// changed replicas all the same ([Spec.Surplus]), for an owner whose own rules
// allow it.
//
// Under spec.FeatureGates, as JobSet's webhook with its gates: with the gate
// "ElasticJobSet" off, an Indexed role's parallelism and completions are
// immutable too ("field is immutable"). The gates Validate reads on create
// are not checked again, as JobSet checks them on create only.
func ValidateUpdate(old, spec *Spec) Errors {
	errs := validate(spec, gated{})
	elastic := !spec.gateOff(gateElastic)
	o, n := Default(*old), Default(*spec)
	immutable := func(field string, a, b any, words string) {
		if !reflect.DeepEqual(a, b) {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: field, BadValue: b, Detail: words})
		}
	}
	if len(o.Roles) != len(n.Roles) {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "replicatedJobs", BadValue: len(n.Roles), Detail: immutableWebhook})
	} else {
		for i := range n.Roles {
			a, b := &o.Roles[i], &n.Roles[i]
			immutable(rolePath(i, ".name"), a.Name, b.Name, immutableWebhook)
			immutable(rolePath(i, ".groupName"), a.GroupName, b.GroupName, immutableWebhook)
			immutable(rolePath(i, ".replicas"), a.Replicas, b.Replicas, immutableWebhook)
			if b.NonIndexed || !elastic {
				immutable(rolePath(i, ".template.spec.parallelism"), a.Parallelism, b.Parallelism, immutableWebhook)
				immutable(rolePath(i, ".template.spec.completions"), a.Completions, b.Completions, immutableWebhook)
			} else {
				errs = validateResize(errs, old.Finished, a, b, i)
			}
			immutable(rolePath(i, ".dependsOn"), a.DependsOn, b.DependsOn, immutableSchema)
		}
	}
	immutable("successPolicy", o.SuccessPolicy, n.SuccessPolicy, immutableSchema)
	immutable("failurePolicy", o.FailurePolicy, n.FailurePolicy, immutableSchema)
	immutable("startupPolicy.startupPolicyOrder", o.StartupOrder, n.StartupOrder, immutableSchema)
	immutable("network.subdomain", o.Subdomain, n.Subdomain, immutableSchema)
	immutable("managedBy", o.ManagedBy, n.ManagedBy, immutableWebhook)
	if len(o.VolumeClaims) > 0 || len(n.VolumeClaims) > 0 {
		immutable("volumeClaimPolicies", o.VolumeClaims, n.VolumeClaims, immutableSchema)
	}
	return errs
}

// validateResize checks the new size b of the Indexed role a at position i,
// as JobSet's elastic rules do: no change once the group has finished; a
// changed parallelism or completions at least 1; completions equal to
// parallelism.
func validateResize(errs Errors, finished bool, a, b *Role, i int) Errors {
	pChanged := a.Parallelism != b.Parallelism
	cChanged := !equalOptional(a.Completions, b.Completions)
	if !pChanged && !cChanged {
		return errs
	}
	path := rolePath(i, ".template.spec")
	if finished {
		return append(errs, &fielderr.Error{Type: fielderr.Forbidden, Field: path,
			Detail: "Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)"})
	}
	if pChanged && b.Parallelism < 1 {
		errs = append(errs, invalid(path+".parallelism", b.Parallelism, "parallelism must be >= 1"))
	}
	if cChanged && b.Completions != nil && *b.Completions < 1 {
		errs = append(errs, invalid(path+".completions", *b.Completions, "completions must be >= 1"))
	}
	if b.Completions != nil && *b.Completions != b.Parallelism {
		errs = append(errs, invalid(path+".completions", *b.Completions, "completions must be equal to parallelism for Elastic Indexed Jobs"))
	}
	return errs
}

// equalOptional reports whether two optional counts are both unset or equal.
func equalOptional(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
