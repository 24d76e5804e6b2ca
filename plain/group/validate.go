package group

import (
	"fmt"
	"math"
	"strconv"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

func invalid(field string, v any, detail string) *fielderr.Error {
	return &fielderr.Error{Type: fielderr.Invalid, Field: field, BadValue: v, Detail: detail}
}

func rolePath(i int, rest string) string {
	return "replicatedJobs[" + strconv.Itoa(i) + "]" + rest
}

// Name generation as the API server does it: a generateName longer than
// generatedPrefix is cut, and generatedSuffix random characters follow.
const (
	generatedPrefix = 58
	generatedSuffix = "xxxxx"
)

// checkedName is the name the name checks use: Name, or the longest name the
// API server generates from GenerateName; "" when there is neither.
func (s *Spec) checkedName() string {
	if s.Name != "" || s.GenerateName == "" {
		return s.Name
	}
	p := s.GenerateName
	if len(p) > generatedPrefix {
		p = p[:generatedPrefix]
	}
	return p + generatedSuffix
}

// Validate checks a spec as JobSet's CRD schema and webhook do on create and
// returns every error found, each naming the field (JobSet's path under spec,
// or metadata.name) and the value ([Errors]; nil when the spec is valid).
// Where JobSet's webhook words a message itself, Detail is its words; where it
// passes on a k8s.io/apimachinery helper's, the helper's words. Fields left
// empty that [Default] fills are accepted, as the webhook defaults before it
// validates. With Name empty the names are checked as generated from
// GenerateName.
//
// Checked: the group's name; at least one role; role names unique, and the
// longest child name and (Indexed children with completions) pod name valid
// DNS-1035 labels; replicas, parallelism and completions not negative,
// replicas × parallelism within int32; group names DNS-1035 labels; dependsOn
// on earlier roles only, not on the first, at most 5, Ready or Complete, and
// not with InOrder; the success policy's operator and targets; the failure
// policy's maxRestarts, strategy, rule names (pattern, length, unique),
// actions, failure reasons, patterns (RE2) and targets, and no per-child
// restart action (RestartJob, RestartJobAndIgnoreMaxRestarts) over a role of
// more than 1024 replicas; under InPlaceRestart, each role's backoffLimit
// (MaxInt32), podReplacementPolicy (Failed) and completions (set, equal to
// parallelism); the coordinator inside an Indexed role with completions, and
// its label value; the TTL not negative; subdomain and managedBy; the volume
// claims (no namespace, retention Delete or Retain, names unique DNS-1123
// subdomains with claim names of at most 63 characters, each mounted by some
// role, none a role's volume name). Under Spec.FeatureGates, as JobSet's
// webhook with its gates: restartStrategy InPlaceRestart with the gate
// "InPlaceRestart" off is refused at failurePolicy.restartStrategy (and the
// in-place template rules, which JobSet checks only with the gate on, are
// not checked), and a RestartJob or RestartJobAndIgnoreMaxRestarts action
// with the gate "RestartJob" off at the action of the first rule that has
// one (and the 1024 replicas are not checked), each in JobSet's words. It is linear
// in the number of roles and rules (quadratic only within one rule's short
// lists) and compiles each pattern once.
func Validate(spec *Spec) Errors {
	return validate(spec, gated{inPlaceOff: spec.gateOff(gateInPlaceRestart), restartJobOff: spec.gateOff(gateRestartJob)})
}

// validate is Validate with the create-time gates that refuse their feature:
// ValidateUpdate checks none, as JobSet's webhook checks them on create only.
func validate(spec *Spec, gates gated) Errors {
	var errs Errors
	roleAt := map[string]int{}
	name := spec.checkedName()
	if name == "" {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "metadata.name", Detail: "the group's name prefixes every child's name"})
	}
	if len(spec.Roles) == 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "replicatedJobs", Detail: "at least one replicatedJob is required"})
	}
	for i := range spec.Roles {
		errs = validateRole(errs, spec, name, i, roleAt, gates)
		if _, dup := roleAt[spec.Roles[i].Name]; dup {
			errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: rolePath(i, ".name"), BadValue: spec.Roles[i].Name})
		} else {
			roleAt[spec.Roles[i].Name] = i
		}
	}
	if p := spec.SuccessPolicy; p != nil {
		if p.Operator != "" && p.Operator != All && p.Operator != Any {
			errs = append(errs, fieldcheck.NotSupportedValue("successPolicy.operator", p.Operator, validOperators))
		}
		for j, n := range p.TargetReplicatedJobs {
			if _, ok := roleAt[n]; !ok {
				errs = append(errs, invalid("successPolicy.targetReplicatedJobs["+strconv.Itoa(j)+"]", n,
					"invalid replicatedJob name '"+n+"' does not appear in .spec.ReplicatedJobs"))
			}
		}
	}
	switch spec.StartupOrder {
	case "", AnyOrder:
	case InOrder:
		for i := range spec.Roles {
			if len(spec.Roles[i].DependsOn) > 0 {
				errs = append(errs, invalid("startupPolicy.startupPolicyOrder", spec.StartupOrder, "StartupPolicy and DependsOn APIs are mutually exclusive"))
				break
			}
		}
	default:
		errs = append(errs, fieldcheck.NotSupportedValue("startupPolicy.startupPolicyOrder", spec.StartupOrder, validStartupOrders))
	}
	if p := spec.FailurePolicy; p != nil {
		errs = validateFailurePolicy(errs, p, spec.Roles, roleAt, gates)
	}
	if spec.Coordinator != nil {
		errs = validateCoordinator(errs, spec, name, roleAt)
	}
	if t := spec.TTLSecondsAfterFinished; t != nil && *t < 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "ttlSecondsAfterFinished", BadValue: *t, Detail: "must be greater than or equal to 0", Origin: "minimum"})
	}
	if s := spec.Subdomain; s != "" {
		// The subdomain names the headless Service too, so it must be a
		// DNS-1035 label as well as a DNS-1123 subdomain.
		for _, m := range dns1123Subdomain(s) {
			errs = append(errs, invalid("network.subdomain", s, m))
		}
		for _, m := range dns1035Label(s, subdomainTooLong) {
			errs = append(errs, invalid("network.subdomain", s, m))
		}
	}
	if spec.ManagedBy != "" {
		errs = validateManagedBy(errs, spec.ManagedBy)
	}
	return validateClaims(errs, spec, name)
}

func validateRole(errs Errors, spec *Spec, name string, i int, roleAt map[string]int, gates gated) Errors {
	r := &spec.Roles[i]
	if r.Name == "" {
		return append(errs, &fielderr.Error{Type: fielderr.Required, Field: rolePath(i, ".name")})
	}
	minimum := func(field string, v int32) {
		if v < 0 {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rolePath(i, field), BadValue: v, Detail: "must be greater than or equal to 0", Origin: "minimum"})
		}
	}
	minimum(".replicas", r.Replicas)
	if int64(r.Replicas)*int64(r.Parallelism) > math.MaxInt32 {
		errs = append(errs, invalid(rolePath(i, ".replicas"), r.Replicas,
			fmt.Sprintf("the product of replicas and parallelism must not exceed %d for replicatedJob '%s'", math.MaxInt32, r.Name)))
	}
	minimum(".template.spec.parallelism", r.Parallelism)
	if r.Completions != nil {
		minimum(".template.spec.completions", *r.Completions)
	}
	if g := r.GroupName; g != "" {
		for _, m := range dns1035Label(g, groupNameTooLong) {
			errs = append(errs, invalid(rolePath(i, ".groupName"), g, m))
		}
	}
	if name != "" {
		// Without the group's name the child names say nothing; metadata.name
		// is reported instead.
		errs = validateNames(errs, name, r, i)
	}
	if p := spec.FailurePolicy; p != nil && p.RestartStrategy == InPlaceRestart && !gates.inPlaceOff {
		errs = validateInPlace(errs, r, i)
	}
	if len(r.DependsOn) == 0 {
		return errs
	}
	if i == 0 {
		errs = append(errs, invalid(rolePath(i, ".dependsOn"), nil, firstDependsOn))
	}
	if len(r.DependsOn) > maxDependsOn {
		errs = append(errs, fieldcheck.TooManyItems(rolePath(i, ".dependsOn"), len(r.DependsOn), maxDependsOn))
	}
	seen := map[string]bool{}
	for j, d := range r.DependsOn {
		f := rolePath(i, ".dependsOn["+strconv.Itoa(j)+"]")
		if _, earlier := roleAt[d.Name]; !earlier {
			errs = append(errs, invalid(f+".name", d.Name, "replicatedJob: "+r.Name+" cannot depend on replicatedJob: "+d.Name))
		}
		if seen[d.Name] {
			errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: f + ".name", BadValue: d.Name})
		}
		seen[d.Name] = true
		if d.Status != DependsOnReady && d.Status != DependsOnComplete {
			errs = append(errs, fieldcheck.NotSupportedValue(f+".status", d.Status, validDependsOnStatus))
		}
	}
	return errs
}

// podNameSuffix is "-" and the five random characters that end a pod's name.
const podNameSuffix = "-abcde"

// validateNames checks the longest child name of role r and, for an Indexed
// child with completions, its longest pod name, as DNS-1035 labels. The index
// is replicas-1 (-1 for no replica), as JobSet takes it.
func validateNames(errs Errors, group string, r *Role, i int) Errors {
	job := childName(group, r.Name, r.Replicas-1)
	for _, m := range dns1035Label(job, jobNameTooLong) {
		errs = append(errs, invalid(rolePath(i, ".name"), job, m))
	}
	if !r.NonIndexed && r.Completions != nil {
		pod := podHostname(group, r.Name, r.Replicas-1, *r.Completions-1) + podNameSuffix
		for _, m := range dns1035Label(pod, podNameTooLong) {
			errs = append(errs, invalid(rolePath(i, ".name"), pod, m))
		}
	}
	return errs
}

// validateInPlace checks role r's child under the in-place restart strategy:
// its pods are restarted, never replaced, so the Job must never fail nor
// recreate a pod by itself, and every pod of it runs at once.
func validateInPlace(errs Errors, r *Role, i int) Errors {
	suffix := " when in-place restart is enabled"
	if b := r.BackoffLimit; b == nil || *b != math.MaxInt32 {
		errs = append(errs, invalid(rolePath(i, ".template.spec.backoffLimit"), optional(b),
			fmt.Sprintf("replicatedJob %s: must be set to %d (MaxInt32)%s", r.Name, math.MaxInt32, suffix)))
	}
	if p := r.PodReplacementPolicy; p != podReplacementFailed {
		var v any
		if p != "" {
			v = p
		}
		errs = append(errs, invalid(rolePath(i, ".template.spec.podReplacementPolicy"), v,
			"replicatedJob "+r.Name+": must be set to "+podReplacementFailed+suffix))
	}
	if c := r.Completions; c == nil || *c != r.Parallelism {
		errs = append(errs, invalid(rolePath(i, ".template.spec.completions"), optional(c),
			"replicatedJob "+r.Name+": completions and parallelism must be set and equal to each other"+suffix))
	}
	return errs
}

// podReplacementFailed is the batch/v1 podReplacementPolicy Failed.
const podReplacementFailed = "Failed"

// optional returns *p, or nil for a nil p, as a BadValue.
func optional(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}
