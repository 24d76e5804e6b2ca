package group

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

var (
	dns1035   = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelVal  = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`)
	ruleName  = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
	httpPath  = regexp.MustCompile(`^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]+$`)
)

func invalid(field string, v any, detail string) *fielderr.Error {
	return &fielderr.Error{Type: fielderr.Invalid, Field: field, BadValue: v, Detail: detail}
}

func rolePath(i int, rest string) string {
	return "replicatedJobs[" + strconv.Itoa(i) + "]" + rest
}

// Validate checks a spec as JobSet's CRD schema and webhook do on create and
// returns every error found, each naming the field and the value ([Errors]; nil
// when the spec is valid). Fields left empty that [Default] fills are accepted.
// Checked: the group's name; at least one role; role names unique, and the
// longest child name and pod name valid DNS labels; replicas, parallelism and
// completions not negative, replicas × parallelism within int32; group names valid label values; dependsOn on earlier roles only, not
// on the first, at most 5, Ready or Complete, and not with InOrder;
// the success policy's operator and targets; the failure policy's maxRestarts,
// strategy, rule names (pattern, length, unique), actions, failure reasons,
// patterns (RE2) and targets; the coordinator inside its role; the TTL not
// negative; subdomain and managedBy. It is linear in the number of roles and
// rules (quadratic only within one rule's short lists) and compiles each pattern
// once.
func Validate(spec *Spec) Errors {
	var errs Errors
	roleAt := map[string]int{}
	if spec.Name == "" {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "metadata.name", Detail: "the group's name prefixes every child's name"})
	}
	if len(spec.Roles) == 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: "replicatedJobs", Detail: "at least one replicatedJob is required"})
	}
	for i := range spec.Roles {
		errs = validateRole(errs, spec, i, roleAt)
		if _, dup := roleAt[spec.Roles[i].Name]; dup {
			errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: rolePath(i, ".name"), BadValue: spec.Roles[i].Name})
		} else {
			roleAt[spec.Roles[i].Name] = i
		}
	}
	target := func(field string, names []string) {
		for j, n := range names {
			if _, ok := roleAt[n]; !ok {
				errs = append(errs, invalid(field+"["+strconv.Itoa(j)+"]", n, "must name a replicatedJob"))
			}
		}
	}
	if p := spec.SuccessPolicy; p != nil {
		if p.Operator != "" && p.Operator != All && p.Operator != Any {
			errs = append(errs, fieldcheck.NotSupportedValue("successPolicy.operator", p.Operator, validOperators))
		}
		target("successPolicy.targetReplicatedJobs", p.TargetReplicatedJobs)
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
		errs = validateFailurePolicy(errs, p)
		for i := range p.Rules {
			target(rulePath(i)+".targetReplicatedJobs", p.Rules[i].TargetReplicatedJobs)
		}
	}
	if c := spec.Coordinator; c != nil {
		if i, ok := roleAt[c.ReplicatedJob]; !ok {
			errs = append(errs, invalid("coordinator.replicatedJob", c.ReplicatedJob, "must name a replicatedJob"))
		} else {
			r := &spec.Roles[i]
			if c.JobIndex < 0 || c.JobIndex >= r.Replicas {
				errs = append(errs, invalid("coordinator.jobIndex", c.JobIndex, "must be in [0, replicas) of "+strconv.Quote(r.Name)))
			}
			if c.PodIndex < 0 || c.PodIndex >= podCount(r) {
				errs = append(errs, invalid("coordinator.podIndex", c.PodIndex, "must be in [0, completions) of "+strconv.Quote(r.Name)))
			}
		}
	}
	if t := spec.TTLSecondsAfterFinished; t != nil && *t < 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "ttlSecondsAfterFinished", BadValue: *t, Detail: "must be greater than or equal to 0", Origin: "minimum"})
	}
	// The subdomain names the headless Service too, so it must be a DNS-1035
	// label as well as a DNS-1123 subdomain: the stricter rule is the first.
	if spec.Subdomain != "" && (len(spec.Subdomain) > maxNameLength || !dns1035.MatchString(spec.Subdomain)) {
		errs = append(errs, invalid("network.subdomain", spec.Subdomain, "must be a valid DNS-1035 label of at most 63 characters"))
	}
	if spec.ManagedBy != "" {
		errs = validateManagedBy(errs, spec.ManagedBy)
	}
	return errs
}

// podCount is the number of pod indexes of a child of r: completions when set,
// else parallelism.
func podCount(r *Role) int32 {
	if r.Completions != nil {
		return *r.Completions
	}
	return r.Parallelism
}

func validateRole(errs Errors, spec *Spec, i int, roleAt map[string]int) Errors {
	r := &spec.Roles[i]
	if r.Name == "" {
		return append(errs, &fielderr.Error{Type: fielderr.Required, Field: rolePath(i, ".name")})
	}
	if spec.Name != "" {
		// Without the group's name the child names say nothing; metadata.name
		// is reported instead.
		errs = validateNames(errs, spec.Name, r, i)
	}
	minimum := func(field string, v int32) {
		if v < 0 {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rolePath(i, field), BadValue: v, Detail: "must be greater than or equal to 0", Origin: "minimum"})
		}
	}
	minimum(".replicas", r.Replicas)
	if int64(r.Replicas)*int64(r.Parallelism) > math.MaxInt32 {
		errs = append(errs, invalid(rolePath(i, ".replicas"), r.Replicas, "the product of replicas and parallelism must not exceed "+strconv.Itoa(math.MaxInt32)))
	}
	minimum(".template.spec.parallelism", r.Parallelism)
	if r.Completions != nil {
		minimum(".template.spec.completions", *r.Completions)
	}
	if g := r.GroupName; len(g) > maxNameLength || !labelVal.MatchString(g) {
		errs = append(errs, invalid(rolePath(i, ".groupName"), g, "must be a valid label value"))
	}
	if len(r.DependsOn) == 0 {
		return errs
	}
	if i == 0 {
		errs = append(errs, invalid(rolePath(i, ".dependsOn"), nil, "dependsOn can't be set for the first ReplicatedJob"))
	}
	if len(r.DependsOn) > maxDependsOn {
		errs = append(errs, fieldcheck.TooManyItems(rolePath(i, ".dependsOn"), len(r.DependsOn), maxDependsOn))
	}
	seen := map[string]bool{}
	for j, d := range r.DependsOn {
		f := rolePath(i, ".dependsOn["+strconv.Itoa(j)+"]")
		if _, earlier := roleAt[d.Name]; !earlier {
			errs = append(errs, invalid(f+".name", d.Name, "must name an earlier replicatedJob"))
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

// podNameSuffix is the length of "-xxxxx", the random end of a pod's name.
const podNameSuffix = 6

// validateNames checks the longest child name and pod hostname of role r.
func validateNames(errs Errors, group string, r *Role, i int) Errors {
	last := max(r.Replicas-1, 0)
	if n := childName(group, r.Name, last); len(n) > maxNameLength || !dns1035.MatchString(n) {
		return append(errs, invalid(rolePath(i, ".name"), r.Name, "child name "+strconv.Quote(n)+" must be a valid DNS-1035 label of at most 63 characters"))
	}
	// A pod's name is its hostname and a random suffix of podNameSuffix bytes;
	// JobSet checks it for children with completions (Indexed, as it defaults).
	if r.Completions != nil && *r.Completions > 0 {
		if h := podHostname(group, r.Name, last, *r.Completions-1); len(h)+podNameSuffix > maxNameLength {
			errs = append(errs, invalid(rolePath(i, ".name"), r.Name, "pod name "+strconv.Quote(h+"-xxxxx")+" must be at most 63 characters"))
		}
	}
	return errs
}

func validateFailurePolicy(errs Errors, p *FailurePolicy) Errors {
	if p.MaxRestarts < 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "failurePolicy.maxRestarts", BadValue: p.MaxRestarts, Detail: "must be greater than or equal to 0", Origin: "minimum"})
	}
	switch p.RestartStrategy {
	case "", Recreate, BlockingRecreate, InPlaceRestart:
	default:
		errs = append(errs, fieldcheck.NotSupportedValue("failurePolicy.restartStrategy", p.RestartStrategy, validRestartStrategy))
	}
	names := map[string]bool{}
	for i := range p.Rules {
		r := &p.Rules[i]
		name := r.Name
		if name == "" {
			name = "failurePolicyRule" + strconv.Itoa(i)
		}
		switch {
		case len(name) > maxRuleNameLength:
			errs = append(errs, &fielderr.Error{Type: fielderr.TooLong, Field: rulePath(i) + ".name", BadValue: name, Max: maxRuleNameLength, Detail: "may not be more than 128 bytes"})
		case !ruleName.MatchString(name):
			errs = append(errs, invalid(rulePath(i)+".name", name, "must match "+ruleName.String()))
		}
		if names[name] {
			errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: rulePath(i) + ".name", BadValue: name})
		}
		names[name] = true
		switch r.Action {
		case FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts, RestartJob, RestartJobAndIgnoreMaxRestarts:
		case "":
			errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: rulePath(i) + ".action"})
		default:
			errs = append(errs, fieldcheck.NotSupportedValue(rulePath(i)+".action", r.Action, validActions))
		}
		errs = uniqueStrings(errs, rulePath(i)+".onJobFailureReasons", r.OnJobFailureReasons, func(j int, s string) *fielderr.Error {
			f := rulePath(i) + ".onJobFailureReasons[" + strconv.Itoa(j) + "]"
			for _, v := range validJobFailureReason {
				if s == v {
					return nil
				}
			}
			return fieldcheck.NotSupportedValue(f, s, validJobFailureReason)
		})
		errs = uniqueStrings(errs, rulePath(i)+".onJobFailureMessagePatterns", r.OnJobFailureMessagePatterns, func(j int, s string) *fielderr.Error {
			if _, err := regexp.Compile(s); err != nil {
				return patternError(i, j, s, err)
			}
			return nil
		})
	}
	return errs
}

// uniqueStrings checks each item (by position) with check and reports repeated
// items.
func uniqueStrings(errs Errors, field string, items []string, check func(j int, item string) *fielderr.Error) Errors {
	for j, s := range items {
		f := field + "[" + strconv.Itoa(j) + "]"
		if e := check(j, s); e != nil {
			errs = append(errs, e)
		}
		for _, prev := range items[:j] {
			if prev == s {
				errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: f, BadValue: s})
				break
			}
		}
	}
	return errs
}

func validateManagedBy(errs Errors, v string) Errors {
	if len(v) > maxManagedByLength {
		return append(errs, &fielderr.Error{Type: fielderr.TooLong, Field: "managedBy", BadValue: v, Max: maxManagedByLength, Detail: "may not be more than 63 bytes"})
	}
	domain, path, ok := strings.Cut(v, "/")
	if !ok || !subdomain.MatchString(domain) || len(domain) > 253 || !httpPath.MatchString(path) {
		errs = append(errs, invalid("managedBy", v, "must be a domain-prefixed path (such as \"acme.io/foo\")"))
	}
	return errs
}
