package group

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

// validateFailurePolicy checks the failure policy p of a group of roles, whose
// names are the keys of roleAt.
func validateFailurePolicy(errs Errors, p *FailurePolicy, roles []Role, roleAt map[string]int, gates gated) Errors {
	if p.RestartStrategy == InPlaceRestart && gates.inPlaceOff {
		errs = append(errs, invalid("failurePolicy.restartStrategy", p.RestartStrategy, inPlaceGateOff))
	}
	perChildGate := false
	if p.MaxRestarts < 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: "failurePolicy.maxRestarts", BadValue: p.MaxRestarts, Detail: "must be greater than or equal to 0", Origin: "minimum"})
	}
	switch p.RestartStrategy {
	case "", Recreate, BlockingRecreate, InPlaceRestart:
	default:
		errs = append(errs, fieldcheck.NotSupportedValue("failurePolicy.restartStrategy", p.RestartStrategy, validRestartStrategy))
	}
	// JobSet reports a repeated name once, with every index that holds it.
	holders := map[string][]int{}
	for i := range p.Rules {
		n := ruleNameAt(p, i)
		holders[n] = append(holders[n], i)
	}
	for i := range p.Rules {
		r := &p.Rules[i]
		name := ruleNameAt(p, i)
		if n := len(name); n > maxRuleNameLength {
			errs = append(errs, invalid(rulePath(i)+".name", name, fmt.Sprintf(
				"invalid failure policy rule name of length %d, the rule name must be at least 1 characters long and at most %d characters long", n, maxRuleNameLength)))
		}
		if !ruleNameRe.MatchString(name) {
			errs = append(errs, invalid(rulePath(i)+".name", name, "invalid failure policy rule name '"+name+"', "+ruleNameWords))
		}
		if h := holders[name]; len(h) > 1 && h[1] == i {
			errs = append(errs, invalid(rulePath(i)+".name", name, fmt.Sprintf("rule names are not unique, rules with indices %v all have the same name '%s'", h, name)))
		}
		switch r.Action {
		case FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts:
		case RestartJob, RestartJobAndIgnoreMaxRestarts:
			switch {
			case !gates.restartJobOff:
				errs = perChildRestarts(errs, i, r, roles, roleAt)
			case !perChildGate:
				// JobSet says it once, whatever the number of such rules.
				errs = append(errs, invalid(rulePath(i)+".action", r.Action, restartJobGateOff))
				perChildGate = true
			}
		case "":
			errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: rulePath(i) + ".action"})
		default:
			errs = append(errs, fieldcheck.NotSupportedValue(rulePath(i)+".action", r.Action, validActions))
		}
		errs = uniqueStrings(errs, rulePath(i)+".onJobFailureReasons", r.OnJobFailureReasons, func(j int, s string) *fielderr.Error {
			for _, v := range validJobFailureReason {
				if s == v {
					return nil
				}
			}
			return invalid(rulePath(i)+".onJobFailureReasons["+strconv.Itoa(j)+"]", s,
				"invalid job failure reason '"+s+"' in failure policy is not a recognized job failure reason")
		})
		errs = uniqueStrings(errs, rulePath(i)+".onJobFailureMessagePatterns", r.OnJobFailureMessagePatterns, func(j int, s string) *fielderr.Error {
			if _, err := regexp.Compile(s); err != nil {
				return patternError(i, j, s, err)
			}
			return nil
		})
		for j, n := range r.TargetReplicatedJobs {
			if _, ok := roleAt[n]; !ok {
				errs = append(errs, invalid(rulePath(i)+".targetReplicatedJobs["+strconv.Itoa(j)+"]", n,
					"invalid replicatedJob name '"+n+"' in failure policy does not appear in .spec.ReplicatedJobs"))
			}
		}
	}
	return errs
}

// gated says which of JobSet's create-time gates refuse their feature: each
// is set in Spec.FeatureGates, and set false.
type gated struct{ inPlaceOff, restartJobOff bool }

// ruleNameAt is the name of rule i with the default applied.
func ruleNameAt(p *FailurePolicy, i int) string {
	if n := p.Rules[i].Name; n != "" {
		return n
	}
	return "failurePolicyRule" + strconv.Itoa(i)
}

// perChildRestarts refuses a per-child restart action (rule i) over a role of
// more replicas than the per-index counters of status can hold.
func perChildRestarts(errs Errors, i int, r *Rule, roles []Role, roleAt map[string]int) Errors {
	check := func(role *Role) {
		if role.Replicas > maxJobRestartsItems {
			errs = append(errs, invalid(rulePath(i)+".action", r.Action, fmt.Sprintf(
				"%s keeps a restart count per child in status.replicatedJobsStatus[].jobRestarts, which holds at most %d items: replicatedJob '%s' has %d replicas",
				r.Action, maxJobRestartsItems, role.Name, role.Replicas)))
		}
	}
	if len(r.TargetReplicatedJobs) == 0 {
		for k := range roles {
			check(&roles[k])
		}
		return errs
	}
	for _, n := range r.TargetReplicatedJobs {
		if k, ok := roleAt[n]; ok {
			check(&roles[k])
		}
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

// validateCoordinator checks the coordinator as JobSet does: its role, job
// index, the role's completion mode and completions, and its pod index, the
// first error only; then its label value, whose length the subdomain counts in.
func validateCoordinator(errs Errors, spec *Spec, name string, roleAt map[string]int) Errors {
	c := spec.Coordinator
	i, ok := roleAt[c.ReplicatedJob]
	var r *Role
	if ok {
		r = &spec.Roles[i]
	}
	switch {
	case !ok:
		errs = append(errs, invalid("coordinator.replicatedJob", c.ReplicatedJob, "coordinator replicatedJob "+c.ReplicatedJob+" does not exist"))
	case c.JobIndex < 0 || c.JobIndex >= r.Replicas:
		errs = append(errs, invalid("coordinator.jobIndex", c.JobIndex, fmt.Sprintf("coordinator job index %d is invalid for replicatedJob %s", c.JobIndex, r.Name)))
	case r.NonIndexed || r.Completions == nil:
		errs = append(errs, invalid("coordinator.replicatedJob", c.ReplicatedJob, coordinatorIndexed))
	case c.PodIndex < 0 || c.PodIndex >= *r.Completions:
		errs = append(errs, invalid("coordinator.podIndex", c.PodIndex, fmt.Sprintf("coordinator pod index %d is invalid for replicatedJob %s job index %d", c.PodIndex, c.ReplicatedJob, c.JobIndex)))
	}
	if name == "" {
		return errs
	}
	sub := spec.Subdomain
	if sub == "" {
		sub = name
	}
	v := c.Value(name, sub)
	if ms := labelValue(v); len(ms) > 0 {
		errs = append(errs, invalid("coordinator", v, fmt.Sprintf(
			"spec will lead to invalid label value %q for coordinator label %q (long JobSet / ReplicatedJob / SubDomain name?): %s", v, labelCoordinator, strings.Join(ms, ", "))))
	}
	return errs
}

// validateManagedBy checks managedBy as apimachinery's IsDomainPrefixedPath
// does, then its length.
func validateManagedBy(errs Errors, v string) Errors {
	domain, path, ok := strings.Cut(v, "/")
	switch {
	case !ok || domain == "" || path == "":
		errs = append(errs, invalid("managedBy", v, domainPrefixedWords))
	default:
		for _, m := range dns1123Subdomain(domain) {
			errs = append(errs, invalid("managedBy", domain, m))
		}
		if !httpPathRe.MatchString(path) {
			errs = append(errs, invalid("managedBy", path, regexWords("Invalid path", httpPathExpr)))
		}
	}
	if len(v) > maxManagedByLength {
		errs = append(errs, &fielderr.Error{Type: fielderr.TooLong, Field: "managedBy", BadValue: v, Max: maxManagedByLength, Detail: "may not be more than 63 bytes"})
	}
	return errs
}
