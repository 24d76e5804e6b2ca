package podfailurepolicy

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// The valid values in the order the API server lists them (sorted).
var (
	validActions = []batchv1.PodFailurePolicyAction{
		batchv1.PodFailurePolicyActionCount,
		batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob,
		batchv1.PodFailurePolicyActionIgnore,
	}
	validOperators = []batchv1.PodFailurePolicyOnExitCodesOperator{
		batchv1.PodFailurePolicyOnExitCodesOpIn,
		batchv1.PodFailurePolicyOnExitCodesOpNotIn,
	}
	validStatuses = []corev1.ConditionStatus{
		corev1.ConditionFalse,
		corev1.ConditionTrue,
		corev1.ConditionUnknown,
	}
	validRestartPolicies = []corev1.RestartPolicy{
		corev1.RestartPolicyOnFailure,
		corev1.RestartPolicyNever,
	}
	validReplacementPolicies = []batchv1.PodReplacementPolicy{batchv1.Failed}

	actionRequired        = fmt.Sprintf("valid values: %q", validActions)
	operatorRequired      = fmt.Sprintf("valid values: %q", validOperators)
	restartPolicyRequired = fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	restartPolicyNotNever = fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)
)

// Validate checks spec.PodFailurePolicy against the rest of spec the way the API
// server does on create, and returns every error found (not only the first), with
// the API server's types, paths and messages, in the API server's order. fldPath is
// the path of spec; nil means field.NewPath("spec"). A nil spec or a spec without a
// pod failure policy has nothing to check and gives nil.
//
// Besides the policy itself it checks the two fields of spec that a policy
// constrains: template.spec.restartPolicy must be Never (an empty restartPolicy
// counts as Always, its default) and podReplacementPolicy, when set, must be Failed. It does
// not check the rest of the Job, nor that the policy is unchanged on update.
//
// An empty onPodConditions status is accepted: API defaulting sets it to True before
// the API server validates, so a Job built without defaulting is judged as the
// server would judge it after defaulting.
func Validate(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if spec == nil || spec.PodFailurePolicy == nil {
		return nil
	}
	if fldPath == nil {
		fldPath = field.NewPath("spec")
	}
	var errs field.ErrorList
	rulesPath := fldPath.Child("podFailurePolicy", "rules")
	rules := spec.PodFailurePolicy.Rules
	if len(rules) > MaxRules {
		errs = append(errs, field.TooMany(rulesPath, len(rules), MaxRules))
	}
	for i := range rules {
		errs = validateRule(errs, spec, &rules[i], rulePath{rulesPath, i})
	}

	if rp := spec.PodReplacementPolicy; rp != nil && *rp != batchv1.Failed {
		errs = append(errs, field.NotSupported(fldPath.Child("podReplacementPolicy"), *rp, validReplacementPolicies))
	}

	if rp := spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyNever {
		restartPath := fldPath.Child("template", "spec", "restartPolicy")
		switch rp {
		case "", corev1.RestartPolicyAlways:
			errs = append(errs, field.Required(restartPath, restartPolicyRequired))
		case corev1.RestartPolicyOnFailure:
			errs = append(errs, field.Invalid(restartPath, rp, restartPolicyNotNever))
		default:
			errs = append(errs, field.NotSupported(restartPath, rp, validRestartPolicies))
		}
	}
	return errs
}

// rulePath names a rule. Paths are built only for errors, so a valid policy costs
// no allocation for them.
type rulePath struct {
	rules *field.Path
	index int
}

func (p rulePath) path() *field.Path { return p.rules.Index(p.index) }

func (p rulePath) child(names ...string) *field.Path {
	return p.path().Child(names[0], names[1:]...)
}

func validateRule(errs field.ErrorList, spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, rp rulePath) field.ErrorList {
	switch rule.Action {
	case "":
		errs = append(errs, field.Required(rp.child("action"), actionRequired))
	case batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(rp.child("action"), rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore, batchv1.PodFailurePolicyActionCount:
	default:
		errs = append(errs, field.NotSupported(rp.child("action"), rule.Action, validActions))
	}

	hasExitCodes := rule.OnExitCodes != nil
	// An empty list is treated as absent, as the API server does.
	hasConditions := len(rule.OnPodConditions) > 0
	if hasExitCodes {
		errs = validateExitCodes(errs, spec, rule.OnExitCodes, rp)
	}
	if hasConditions {
		errs = validateConditions(errs, rule.OnPodConditions, rp)
	}
	switch {
	case hasExitCodes && hasConditions:
		errs = append(errs, field.Invalid(rp.path(), field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	case !hasExitCodes && !hasConditions:
		errs = append(errs, field.Invalid(rp.path(), field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateExitCodes(errs field.ErrorList, spec *batchv1.JobSpec, req *batchv1.PodFailurePolicyOnExitCodesRequirement, rp rulePath) field.ErrorList {
	switch req.Operator {
	case "":
		errs = append(errs, field.Required(rp.child("onExitCodes", "operator"), operatorRequired))
	case batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn:
	default:
		errs = append(errs, field.NotSupported(rp.child("onExitCodes", "operator"), req.Operator, validOperators))
	}
	if req.ContainerName != nil && !templateHasContainer(&spec.Template.Spec, *req.ContainerName) {
		errs = append(errs, field.Invalid(rp.child("onExitCodes", "containerName"), *req.ContainerName,
			"must be one of the container or initContainer names in the pod template"))
	}

	values := req.Values
	if len(values) == 0 {
		errs = append(errs, field.Invalid(rp.child("onExitCodes", "values"), values, "at least one value is required"))
	} else if len(values) > MaxExitCodeValues {
		errs = append(errs, field.TooMany(rp.child("onExitCodes", "values"), len(values), MaxExitCodeValues))
	}
	// In an ordered list a repeat sits next to its first occurrence, so only an
	// unordered list needs a set to find the values seen before.
	ordered := slices.IsSorted(values)
	var seen map[int32]struct{}
	if !ordered {
		seen = make(map[int32]struct{}, len(values))
	}
	isIn := req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn
	for j, v := range values {
		if isIn && v == 0 {
			errs = append(errs, field.Invalid(rp.child("onExitCodes", "values").Index(j), v, "must not be 0 for the In operator"))
		}
		dup := false
		if ordered {
			dup = j > 0 && values[j-1] == v
		} else if _, dup = seen[v]; !dup {
			seen[v] = struct{}{}
		}
		if dup {
			errs = append(errs, field.Duplicate(rp.child("onExitCodes", "values").Index(j), v))
		}
	}
	if !ordered {
		errs = append(errs, field.Invalid(rp.child("onExitCodes", "values"), values, "must be ordered"))
	}
	return errs
}

func validateConditions(errs field.ErrorList, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, rp rulePath) field.ErrorList {
	if len(patterns) > MaxConditionPatterns {
		errs = append(errs, field.TooMany(rp.child("onPodConditions"), len(patterns), MaxConditionPatterns))
	}
	for j := range patterns {
		p := &patterns[j]
		for _, msg := range labelKeyErrors(string(p.Type)) {
			errs = append(errs, field.Invalid(rp.child("onPodConditions").Index(j).Child("type"), string(p.Type), msg))
		}
		switch p.Status {
		case "", corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
		default:
			errs = append(errs, field.NotSupported(rp.child("onPodConditions").Index(j).Child("status"), p.Status, validStatuses))
		}
	}
	return errs
}

// isPlainLabelKey reports whether s is a label key without a prefix: 1 to 63
// characters of [A-Za-z0-9_.-] that begin and end with a letter or digit. Such a key
// is valid; anything else is left to labelKeyErrors' regular expressions, which
// explain what is wrong. It spares the common condition types those and allocations.
func isPlainLabelKey(s string) bool {
	if len(s) == 0 || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func templateHasContainer(spec *corev1.PodSpec, name string) bool {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return true
		}
	}
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == name {
			return true
		}
	}
	return false
}
