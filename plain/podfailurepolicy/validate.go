package podfailurepolicy

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

// Limits the API server enforces on a pod failure policy.
const (
	// MaxRules is the largest number of rules in a policy.
	MaxRules = 20
	// MaxExitCodeValues is the largest number of values in one onExitCodes requirement.
	MaxExitCodeValues = 255
	// MaxConditionPatterns is the largest number of patterns in one onPodConditions list.
	MaxConditionPatterns = 20
)

// The valid values in the order the API server lists them (sorted); a
// fielderr.Error of type fielderr.NotSupported carries them in Supported.
var (
	// validActions are the actions Validate accepts.
	validActions = []Action{ActionCount, ActionFailIndex, ActionFailJob, ActionIgnore}
	// validOperators are the operators Validate accepts.
	validOperators = []Operator{OpIn, OpNotIn}
	// validStatuses are the pattern statuses Validate accepts (and "", meaning True).
	validStatuses = []ConditionStatus{StatusFalse, StatusTrue, StatusUnknown}

	actionRequired   = fmt.Sprintf("valid values: %q", validActions)
	operatorRequired = fmt.Sprintf("valid values: %q", validOperators)
)

// Errors is every error Validate found, in the API server's order. Each is a
// [fielderr.Error]: its Type, the Field from the policy in the API's names
// ("rules[0].onExitCodes.values[2]"; a whole rule is "rules[0]"), the BadValue typed
// as in the policy (Action, Operator, ConditionStatus, int32, []int32, string; the
// length of a list for fielderr.TooMany; nil for a whole rule), the Detail in the
// API server's words, the Supported values (fielderr.NotSupported) and the Max
// length (fielderr.TooMany).
type Errors []*fielderr.Error

func (es Errors) Error() string { return fieldcheck.Join("podfailurepolicy", es) }

// Context is what Validate needs to know of the job beyond its policy.
type Context struct {
	// HasContainer reports whether the pod template has a container (regular or
	// init) of this name, the only names onExitCodes.containerName may use. nil
	// accepts every non-empty name.
	HasContainer func(name string) bool
	// PerIndexBackoff is true when the job sets a per-index backoff limit
	// (backoffLimitPerIndex), which the FailIndex action requires.
	PerIndexBackoff bool
}

// Validate checks a policy the way the API server does on create and returns
// every error found (not only the first), with the API server's types, field
// names and messages, in its order; nil when the policy is valid or nil.
//
// An empty onPodConditions status is accepted: API defaulting sets it to True
// before the API server validates, so a policy built without defaulting is judged
// as the server would judge it after defaulting.
//
// Validate is linear in the size of the policy and allocates only its errors (and
// a set for an unordered list of exit codes).
func Validate(policy *Policy, c Context) Errors {
	if policy == nil {
		return nil
	}
	var errs Errors
	if len(policy.Rules) > MaxRules {
		errs = append(errs, fieldcheck.TooManyItems("rules", len(policy.Rules), MaxRules))
	}
	for i := range policy.Rules {
		errs = validateRule(errs, c, &policy.Rules[i], i)
	}
	return errs
}

// rulePath builds the field names of rule i, only for errors.
func rulePath(i int, names ...string) string {
	p := "rules[" + strconv.Itoa(i) + "]"
	for _, n := range names {
		if n[0] == '[' {
			p += n
		} else {
			p += "." + n
		}
	}
	return p
}

func index(j int) string { return "[" + strconv.Itoa(j) + "]" }

func validateRule(errs Errors, c Context, rule *Rule, i int) Errors {
	switch rule.Action {
	case "":
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: rulePath(i, "action"), Detail: actionRequired})
	case ActionFailIndex:
		if !c.PerIndexBackoff {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "action"), BadValue: rule.Action,
				Detail: "requires the backoffLimitPerIndex to be set"})
		}
	case ActionFailJob, ActionIgnore, ActionCount:
	default:
		errs = append(errs, fieldcheck.NotSupportedValue(rulePath(i, "action"), rule.Action, validActions))
	}

	hasExitCodes := rule.OnExitCodes != nil
	// An empty list is treated as absent, as the API server does.
	hasConditions := len(rule.OnPodConditions) > 0
	if hasExitCodes {
		errs = validateExitCodes(errs, c, rule.OnExitCodes, i)
	}
	if hasConditions {
		errs = validateConditions(errs, rule.OnPodConditions, i)
	}
	switch {
	case hasExitCodes && hasConditions:
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i), Detail: "specifying both OnExitCodes and OnPodConditions is not supported"})
	case !hasExitCodes && !hasConditions:
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i), Detail: "specifying one of OnExitCodes and OnPodConditions is required"})
	}
	return errs
}

func validateExitCodes(errs Errors, c Context, req *ExitCodes, i int) Errors {
	switch req.Operator {
	case "":
		errs = append(errs, &fielderr.Error{Type: fielderr.Required, Field: rulePath(i, "onExitCodes", "operator"), Detail: operatorRequired})
	case OpIn, OpNotIn:
	default:
		errs = append(errs, fieldcheck.NotSupportedValue(rulePath(i, "onExitCodes", "operator"), req.Operator, validOperators))
	}
	if name := req.ContainerName; name != nil && (c.HasContainer == nil && *name == "" || c.HasContainer != nil && !c.HasContainer(*name)) {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "onExitCodes", "containerName"), BadValue: *name,
			Detail: "must be one of the container or initContainer names in the pod template"})
	}

	values := req.Values
	if len(values) == 0 {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "onExitCodes", "values"), BadValue: values,
			Detail: "at least one value is required"})
	} else if len(values) > MaxExitCodeValues {
		errs = append(errs, fieldcheck.TooManyItems(rulePath(i, "onExitCodes", "values"), len(values), MaxExitCodeValues))
	}
	// In an ordered list a repeat sits next to its first occurrence, so only an
	// unordered list needs a set to find the values seen before.
	ordered := slices.IsSorted(values)
	var seen map[int32]struct{}
	if !ordered {
		seen = make(map[int32]struct{}, len(values))
	}
	isIn := req.Operator == OpIn
	for j, v := range values {
		if isIn && v == 0 {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "onExitCodes", "values", index(j)), BadValue: v,
				Detail: "must not be 0 for the In operator"})
		}
		dup := false
		if ordered {
			dup = j > 0 && values[j-1] == v
		} else if _, dup = seen[v]; !dup {
			seen[v] = struct{}{}
		}
		if dup {
			errs = append(errs, &fielderr.Error{Type: fielderr.Duplicate, Field: rulePath(i, "onExitCodes", "values", index(j)), BadValue: v})
		}
	}
	if !ordered {
		errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "onExitCodes", "values"), BadValue: values, Detail: "must be ordered"})
	}
	return errs
}

func validateConditions(errs Errors, patterns []Condition, i int) Errors {
	if len(patterns) > MaxConditionPatterns {
		errs = append(errs, fieldcheck.TooManyItems(rulePath(i, "onPodConditions"), len(patterns), MaxConditionPatterns))
	}
	for j := range patterns {
		p := &patterns[j]
		for _, msg := range conditionTypeErrors(p.Type) {
			errs = append(errs, &fielderr.Error{Type: fielderr.Invalid, Field: rulePath(i, "onPodConditions", index(j), "type"), BadValue: p.Type, Detail: msg})
		}
		switch p.Status {
		case "", StatusTrue, StatusFalse, StatusUnknown:
		default:
			errs = append(errs, fieldcheck.NotSupportedValue(rulePath(i, "onPodConditions", index(j), "status"), p.Status, validStatuses))
		}
	}
	return errs
}
