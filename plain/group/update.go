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
// group names, parallelism and completions: "field is immutable", as
// JobSet's webhook words it; dependsOn: "Value is immutable", as its schema
// does), the success, failure and startup policies and the network subdomain
// ("Value is immutable") and managedBy ("field is immutable"). Each error
// names the field that changed under JobSet's path (JobSet reports any change
// of a role at spec.replicatedJobs). Both specs are compared with [Default]
// applied, so filling a default is no change. Suspension and the TTL may
// change. The rest of each role's template is the Kubernetes layer's to
// compare (groups/childjobs). Elastic scaling of replicas is not covered: it
// is a change here.
func ValidateUpdate(old, spec *Spec) Errors {
	errs := Validate(spec)
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
			immutable(rolePath(i, ".template.spec.parallelism"), a.Parallelism, b.Parallelism, immutableWebhook)
			immutable(rolePath(i, ".template.spec.completions"), a.Completions, b.Completions, immutableWebhook)
			immutable(rolePath(i, ".dependsOn"), a.DependsOn, b.DependsOn, immutableSchema)
		}
	}
	immutable("successPolicy", o.SuccessPolicy, n.SuccessPolicy, immutableSchema)
	immutable("failurePolicy", o.FailurePolicy, n.FailurePolicy, immutableSchema)
	immutable("startupPolicy.startupPolicyOrder", o.StartupOrder, n.StartupOrder, immutableSchema)
	immutable("network.subdomain", o.Subdomain, n.Subdomain, immutableSchema)
	immutable("managedBy", o.ManagedBy, n.ManagedBy, immutableWebhook)
	return errs
}
