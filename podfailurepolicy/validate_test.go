package podfailurepolicy

import (
	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// jobSpec returns a valid spec with restartPolicy Never, containers "main" and
// "sidecar", init container "init", and the given rules.
func jobSpec(rules ...batchv1.PodFailurePolicyRule) *batchv1.JobSpec {
	return &batchv1.JobSpec{
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: rules},
		Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				RestartPolicy:  corev1.RestartPolicyNever,
				Containers:     []corev1.Container{{Name: "main"}, {Name: "sidecar"}},
				InitContainers: []corev1.Container{{Name: "init"}},
			},
		},
	}
}

func with(spec *batchv1.JobSpec, mutate func(*batchv1.JobSpec)) *batchv1.JobSpec {
	mutate(spec)
	return spec
}

func seq(from, to int32) []int32 {
	var v []int32
	for i := from; i <= to; i++ {
		v = append(v, i)
	}
	return v
}

func repeatRule(rule batchv1.PodFailurePolicyRule, n int) []batchv1.PodFailurePolicyRule {
	rules := make([]batchv1.PodFailurePolicyRule, n)
	for i := range rules {
		rules[i] = *rule.DeepCopy()
	}
	return rules
}

func patterns(n int) []batchv1.PodFailurePolicyOnPodConditionsPattern {
	p := make([]batchv1.PodFailurePolicyOnPodConditionsPattern, n)
	for i := range p {
		p[i] = pattern(corev1.DisruptionTarget, corev1.ConditionTrue)
	}
	return p
}

const labelKeyRegexMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

func TestValidate(t *testing.T) {
	rule0 := field.NewPath("spec", "podFailurePolicy", "rules").Index(0)
	exit0 := rule0.Child("onExitCodes")
	values0 := exit0.Child("values")
	conds0 := rule0.Child("onPodConditions")
	restartPolicy := field.NewPath("spec", "template", "spec", "restartPolicy")

	cases := map[string]struct {
		spec    *batchv1.JobSpec
		fldPath *field.Path
		want    field.ErrorList
	}{
		"nil spec": {
			spec: nil,
		},
		"no policy, even with restartPolicy OnFailure": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) {
				s.PodFailurePolicy = nil
				s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			}),
		},
		"policy without rules": {
			spec: jobSpec(),
		},
		"valid policy with every action, operator and status": {
			spec: with(jobSpec(
				condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue)),
				condRule(failJob, pattern("CustomConditionType", corev1.ConditionFalse), pattern("example.com/Custom", corev1.ConditionUnknown)),
				containerRule(count, "main", opIn, 1, 2, 3),
				containerRule(ignore, "init", opIn, 4),
				exitRule(failJob, opNotIn, 0, 5, 6, 7),
				exitRule(failIndex, opIn, -3, 10, 255),
			), func(s *batchv1.JobSpec) {
				s.BackoffLimitPerIndex = ptr.To[int32](1)
				s.PodReplacementPolicy = ptr.To(batchv1.Failed)
			}),
		},
		"empty pattern status is accepted as its default True": {
			spec: jobSpec(condRule(ignore, pattern(corev1.DisruptionTarget, ""))),
		},
		"limits reached exactly": {
			spec: jobSpec(append(
				repeatRule(exitRule(count, opIn, seq(1, plainpfp.MaxExitCodeValues)...), plainpfp.MaxRules-1),
				condRule(ignore, patterns(plainpfp.MaxConditionPatterns)...))...),
		},
		"too many rules": {
			spec: jobSpec(repeatRule(exitRule(count, opIn, 1), plainpfp.MaxRules+1)...),
			want: field.ErrorList{field.TooMany(field.NewPath("spec", "podFailurePolicy", "rules"), 21, 20)},
		},
		"too many values": {
			spec: jobSpec(exitRule(count, opIn, seq(1, plainpfp.MaxExitCodeValues+1)...)),
			want: field.ErrorList{field.TooMany(values0, 256, 255)},
		},
		"too many patterns": {
			spec: jobSpec(condRule(ignore, patterns(plainpfp.MaxConditionPatterns+1)...)),
			want: field.ErrorList{field.TooMany(conds0, 21, 20)},
		},
		"values not ordered": {
			spec: jobSpec(exitRule(count, opIn, 3, 1, 2)),
			want: field.ErrorList{field.Invalid(values0, []int32{3, 1, 2}, "must be ordered")},
		},
		"ordered duplicate": {
			spec: jobSpec(exitRule(count, opIn, 1, 2, 2, 3, 3)),
			want: field.ErrorList{
				field.Duplicate(values0.Index(2), int32(2)),
				field.Duplicate(values0.Index(4), int32(3)),
			},
		},
		"unordered duplicate": {
			spec: jobSpec(exitRule(count, opNotIn, 3, 1, 3, 1)),
			want: field.ErrorList{
				field.Duplicate(values0.Index(2), int32(3)),
				field.Duplicate(values0.Index(3), int32(1)),
				field.Invalid(values0, []int32{3, 1, 3, 1}, "must be ordered"),
			},
		},
		"zero with In": {
			spec: jobSpec(exitRule(count, opIn, 0, 1)),
			want: field.ErrorList{field.Invalid(values0.Index(0), int32(0), "must not be 0 for the In operator")},
		},
		"zero with NotIn is allowed": {
			spec: jobSpec(exitRule(count, opNotIn, 0, 1)),
		},
		"duplicate zero with In": {
			spec: jobSpec(exitRule(count, opIn, 0, 0)),
			want: field.ErrorList{
				field.Invalid(values0.Index(0), int32(0), "must not be 0 for the In operator"),
				field.Invalid(values0.Index(1), int32(0), "must not be 0 for the In operator"),
				field.Duplicate(values0.Index(1), int32(0)),
			},
		},
		"no values": {
			spec: jobSpec(exitRule(count, opIn)),
			want: field.ErrorList{field.Invalid(values0, []int32(nil), "at least one value is required")},
		},
		"both requirements": {
			spec: jobSpec(batchv1.PodFailurePolicyRule{
				Action:          ignore,
				OnExitCodes:     &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: opIn, Values: []int32{1}},
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{pattern(corev1.DisruptionTarget, corev1.ConditionTrue)},
			}),
			want: field.ErrorList{field.Invalid(rule0, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported")},
		},
		"no requirement": {
			spec: jobSpec(batchv1.PodFailurePolicyRule{Action: ignore}),
			want: field.ErrorList{field.Invalid(rule0, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required")},
		},
		"empty onPodConditions counts as no requirement": {
			spec: jobSpec(condRule(ignore, []batchv1.PodFailurePolicyOnPodConditionsPattern{}...)),
			want: field.ErrorList{field.Invalid(rule0, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required")},
		},
		"unknown containerName": {
			spec: jobSpec(containerRule(failJob, "other", opIn, 1)),
			want: field.ErrorList{field.Invalid(exit0.Child("containerName"), "other", "must be one of the container or initContainer names in the pod template")},
		},
		"empty containerName": {
			spec: jobSpec(containerRule(failJob, "", opIn, 1)),
			want: field.ErrorList{field.Invalid(exit0.Child("containerName"), "", "must be one of the container or initContainer names in the pod template")},
		},
		"missing action": {
			spec: jobSpec(exitRule("", opIn, 1)),
			want: field.ErrorList{field.Required(rule0.Child("action"), `valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`)},
		},
		"unknown action": {
			spec: jobSpec(exitRule("Retry", opIn, 1)),
			want: field.ErrorList{&field.Error{
				Type:     field.ErrorTypeNotSupported,
				Field:    "spec.podFailurePolicy.rules[0].action",
				BadValue: batchv1.PodFailurePolicyAction("Retry"),
				Detail:   `supported values: "Count", "FailIndex", "FailJob", "Ignore"`,
			}},
		},
		"FailIndex without backoffLimitPerIndex": {
			spec: jobSpec(exitRule(failIndex, opIn, 1)),
			want: field.ErrorList{field.Invalid(rule0.Child("action"), failIndex, "requires the backoffLimitPerIndex to be set")},
		},
		"missing operator": {
			spec: jobSpec(exitRule(count, "", 1)),
			want: field.ErrorList{field.Required(exit0.Child("operator"), `valid values: ["In" "NotIn"]`)},
		},
		"unknown operator": {
			spec: jobSpec(exitRule(count, "Between", 1)),
			want: field.ErrorList{&field.Error{
				Type:     field.ErrorTypeNotSupported,
				Field:    "spec.podFailurePolicy.rules[0].onExitCodes.operator",
				BadValue: batchv1.PodFailurePolicyOnExitCodesOperator("Between"),
				Detail:   `supported values: "In", "NotIn"`,
			}},
		},
		"empty condition type": {
			spec: jobSpec(condRule(ignore, pattern("", corev1.ConditionTrue))),
			want: field.ErrorList{
				field.Invalid(conds0.Index(0).Child("type"), "", "name part must be non-empty"),
				field.Invalid(conds0.Index(0).Child("type"), "", "name part "+labelKeyRegexMsg),
			},
		},
		"condition type not a qualified name": {
			spec: jobSpec(condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue), pattern("bad type!", corev1.ConditionTrue))),
			want: field.ErrorList{field.Invalid(conds0.Index(1).Child("type"), "bad type!", "name part "+labelKeyRegexMsg)},
		},
		"condition type with empty prefix": {
			spec: jobSpec(condRule(ignore, pattern("/Custom", corev1.ConditionTrue))),
			want: field.ErrorList{field.Invalid(conds0.Index(0).Child("type"), "/Custom", "prefix part must be non-empty")},
		},
		"unknown condition status": {
			spec: jobSpec(condRule(ignore, pattern(corev1.DisruptionTarget, "Maybe"))),
			want: field.ErrorList{&field.Error{
				Type:     field.ErrorTypeNotSupported,
				Field:    "spec.podFailurePolicy.rules[0].onPodConditions[0].status",
				BadValue: corev1.ConditionStatus("Maybe"),
				Detail:   `supported values: "False", "True", "Unknown"`,
			}},
		},
		"restartPolicy OnFailure": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }),
			want: field.ErrorList{field.Invalid(restartPolicy, corev1.RestartPolicyOnFailure, `only "Never" is supported when podFailurePolicy is specified`)},
		},
		"restartPolicy Always": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }),
			want: field.ErrorList{field.Required(restartPolicy, `valid values: "OnFailure", "Never"`)},
		},
		"restartPolicy empty is its default Always": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = "" }),
			want: field.ErrorList{field.Required(restartPolicy, `valid values: "OnFailure", "Never"`)},
		},
		"restartPolicy unknown": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = "Sometimes" }),
			want: field.ErrorList{&field.Error{
				Type:     field.ErrorTypeNotSupported,
				Field:    "spec.template.spec.restartPolicy",
				BadValue: corev1.RestartPolicy("Sometimes"),
				Detail:   `supported values: "OnFailure", "Never"`,
			}},
		},
		"podReplacementPolicy TerminatingOrFailed": {
			spec: with(jobSpec(), func(s *batchv1.JobSpec) { s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed) }),
			want: field.ErrorList{&field.Error{
				Type:     field.ErrorTypeNotSupported,
				Field:    "spec.podReplacementPolicy",
				BadValue: batchv1.TerminatingOrFailed,
				Detail:   `supported values: "Failed"`,
			}},
		},
		"custom field path": {
			spec:    with(jobSpec(exitRule("", opIn, 1)), func(s *batchv1.JobSpec) { s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }),
			fldPath: field.NewPath("spec", "jobTemplate", "spec"),
			want: field.ErrorList{
				field.Required(field.NewPath("spec", "jobTemplate", "spec", "podFailurePolicy", "rules").Index(0).Child("action"), `valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`),
				field.Invalid(field.NewPath("spec", "jobTemplate", "spec", "template", "spec", "restartPolicy"), corev1.RestartPolicyOnFailure, `only "Never" is supported when podFailurePolicy is specified`),
			},
		},
		"every error is reported, in the API server's order": {
			spec: with(jobSpec(
				append(repeatRule(exitRule(count, opIn, 1), plainpfp.MaxRules), // rules 0-19 valid
					batchv1.PodFailurePolicyRule{ // rule 20
						Action: failIndex,
						OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
							ContainerName: ptr.To("nope"),
							Operator:      "",
							Values:        []int32{2, 0, 2},
						},
						OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{pattern("bad type!", "Maybe")},
					})...,
			), func(s *batchv1.JobSpec) {
				s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
				s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			}),
			want: func() field.ErrorList {
				rules := field.NewPath("spec", "podFailurePolicy", "rules")
				r := rules.Index(20)
				v := r.Child("onExitCodes", "values")
				return field.ErrorList{
					field.TooMany(rules, 21, 20),
					field.Invalid(r.Child("action"), failIndex, "requires the backoffLimitPerIndex to be set"),
					field.Required(r.Child("onExitCodes", "operator"), `valid values: ["In" "NotIn"]`),
					field.Invalid(r.Child("onExitCodes", "containerName"), "nope", "must be one of the container or initContainer names in the pod template"),
					field.Duplicate(v.Index(2), int32(2)),
					field.Invalid(v, []int32{2, 0, 2}, "must be ordered"),
					field.Invalid(r.Child("onPodConditions").Index(0).Child("type"), "bad type!", "name part "+labelKeyRegexMsg),
					field.NotSupported(r.Child("onPodConditions").Index(0).Child("status"), corev1.ConditionStatus("Maybe"), validStatuses),
					field.Invalid(r, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"),
					field.NotSupported(field.NewPath("spec", "podReplacementPolicy"), batchv1.TerminatingOrFailed, []batchv1.PodReplacementPolicy{batchv1.Failed}),
					field.Invalid(restartPolicy, corev1.RestartPolicyOnFailure, `only "Never" is supported when podFailurePolicy is specified`),
				}
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.spec.DeepCopy()
			got := Validate(tc.spec, tc.fldPath)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.spec); diff != "" {
				t.Errorf("Validate() modified the spec (-before +after):\n%s", diff)
			}
		})
	}
}

// TestValidateErrorStrings pins the text a user sees, as the API server prints it.
func TestValidateErrorStrings(t *testing.T) {
	spec := with(jobSpec(exitRule(count, opIn, 0, 1), exitRule("", opIn, 3, 2)), func(s *batchv1.JobSpec) {
		s.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	})
	want := `[` +
		`spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator, ` +
		`spec.podFailurePolicy.rules[1].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"], ` +
		`spec.podFailurePolicy.rules[1].onExitCodes.values: Invalid value: [3,2]: must be ordered, ` +
		`spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified` +
		`]`
	assert.Equal(t, want, Validate(spec, nil).ToAggregate().Error())
}
