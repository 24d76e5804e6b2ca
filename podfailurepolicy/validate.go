package podfailurepolicy

import (
	"fmt"

	"github.com/jobkit/jobkit/plain/fielderr"
	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

	restartPolicyRequired = fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
	restartPolicyNotNever = fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever)
)

// Validate checks spec.PodFailurePolicy against the rest of spec the way the API
// server does on create, and returns every error found (not only the first), with
// the API server's types, paths and messages, in the API server's order. fldPath is
// the path of spec; nil means field.NewPath("spec"). A nil spec or a spec without a
// pod failure policy has nothing to check and gives nil.
//
// The rules are checked by [plainpfp.Validate], with the template's container
// names and whether backoffLimitPerIndex is set; its errors are reported here as
// field errors. Besides the policy it checks the two fields of spec that a policy
// constrains: template.spec.restartPolicy must be Never (an empty restartPolicy
// counts as Always, its default) and podReplacementPolicy, when set, must be Failed.
// It does not check the rest of the Job, nor that the policy is unchanged on update.
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
	ctx := plainpfp.Context{
		HasContainer:    func(name string) bool { return templateHasContainer(&spec.Template.Spec, name) },
		PerIndexBackoff: spec.BackoffLimitPerIndex != nil,
	}
	var errs field.ErrorList
	if perrs := plainpfp.Validate(policyOf(spec.PodFailurePolicy), ctx); len(perrs) > 0 {
		prefix := fldPath.Child("podFailurePolicy").String() + "."
		for _, e := range perrs {
			errs = append(errs, fieldError(field.NewPath(prefix+e.Field), e))
		}
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

// fieldError is e as a field error at path, with the value typed as in the
// batch/v1 API.
func fieldError(path *field.Path, e *fielderr.Error) *field.Error {
	switch e.Type {
	case fielderr.Required:
		return field.Required(path, e.Detail)
	case fielderr.TooMany:
		return field.TooMany(path, e.BadValue.(int), e.Max)
	case fielderr.Duplicate:
		return field.Duplicate(path, e.BadValue)
	case fielderr.NotSupported:
		switch v := e.BadValue.(type) {
		case plainpfp.Action:
			return field.NotSupported(path, batchv1.PodFailurePolicyAction(v), validActions)
		case plainpfp.Operator:
			return field.NotSupported(path, batchv1.PodFailurePolicyOnExitCodesOperator(v), validOperators)
		case plainpfp.ConditionStatus:
			return field.NotSupported(path, corev1.ConditionStatus(v), validStatuses)
		}
	}
	var v any = field.OmitValueType{}
	switch b := e.BadValue.(type) {
	case nil:
	case plainpfp.Action:
		v = batchv1.PodFailurePolicyAction(b)
	default:
		v = b
	}
	return field.Invalid(path, v, e.Detail)
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
