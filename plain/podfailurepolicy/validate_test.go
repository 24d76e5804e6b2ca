package podfailurepolicy_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jobkit/jobkit/plain/fielderr"
	pfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
)

func TestValidate(t *testing.T) {
	containers := func(name string) bool { return slices.Contains([]string{"task", "setup"}, name) }
	many := func(n int) []int32 {
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(i + 1)
		}
		return v
	}
	type want struct {
		Type     fielderr.Type
		Field    string
		BadValue any
	}
	cases := []struct {
		name   string
		policy *pfp.Policy
		ctx    pfp.Context
		want   []want
	}{
		{name: "nil policy"},
		{
			name:   "valid, every action",
			policy: &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionFailJob, pfp.OpIn, "task", 1, 2), exitRule(pfp.ActionFailIndex, pfp.OpNotIn, "", 0), condRule(pfp.ActionIgnore, pfp.Condition{Type: "example.com/Preempted"}), exitRule(pfp.ActionCount, pfp.OpIn, "", 3)}},
			ctx:    pfp.Context{HasContainer: containers, PerIndexBackoff: true},
		},
		{
			name:   "too many rules",
			policy: &pfp.Policy{Rules: slices.Repeat([]pfp.Rule{exitRule(pfp.ActionCount, pfp.OpIn, "", 1)}, pfp.MaxRules+1)},
			want:   []want{{fielderr.TooMany, "rules", pfp.MaxRules + 1}},
		},
		{
			name:   "action: missing, unknown, FailIndex without per-index backoff",
			policy: &pfp.Policy{Rules: []pfp.Rule{exitRule("", pfp.OpIn, "", 1), exitRule("Retry", pfp.OpIn, "", 1), exitRule(pfp.ActionFailIndex, pfp.OpIn, "", 1)}},
			want: []want{{fielderr.Required, "rules[0].action", nil}, {fielderr.NotSupported, "rules[1].action", pfp.Action("Retry")},
				{fielderr.Invalid, "rules[2].action", pfp.ActionFailIndex}},
		},
		{
			name:   "exit codes: operator, container, zero with In, duplicate, order, too many",
			policy: &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionCount, "", "", 1), exitRule(pfp.ActionCount, pfp.OpIn, "other", 0, 2, 2), exitRule(pfp.ActionCount, pfp.OpNotIn, "", 3, 1, 3), exitRule(pfp.ActionCount, pfp.OpIn, "", many(pfp.MaxExitCodeValues+1)...), exitRule(pfp.ActionCount, pfp.OpIn, "")}},
			ctx:    pfp.Context{HasContainer: containers},
			want: []want{
				{fielderr.Required, "rules[0].onExitCodes.operator", nil},
				{fielderr.Invalid, "rules[1].onExitCodes.containerName", "other"},
				{fielderr.Invalid, "rules[1].onExitCodes.values[0]", int32(0)},
				{fielderr.Duplicate, "rules[1].onExitCodes.values[2]", int32(2)},
				{fielderr.Duplicate, "rules[2].onExitCodes.values[2]", int32(3)},
				{fielderr.Invalid, "rules[2].onExitCodes.values", []int32{3, 1, 3}},
				{fielderr.TooMany, "rules[3].onExitCodes.values", pfp.MaxExitCodeValues + 1},
				{fielderr.Invalid, "rules[4].onExitCodes.values", []int32(nil)},
			},
		},
		{
			name:   "without a container list, any non-empty name is accepted",
			policy: &pfp.Policy{Rules: []pfp.Rule{exitRule(pfp.ActionCount, pfp.OpIn, "whatever", 1), {Action: pfp.ActionCount, OnExitCodes: &pfp.ExitCodes{ContainerName: new(string), Operator: pfp.OpIn, Values: []int32{1}}}}},
			want:   []want{{fielderr.Invalid, "rules[1].onExitCodes.containerName", ""}},
		},
		{
			name: "conditions: bad type and status, too many patterns",
			policy: &pfp.Policy{Rules: []pfp.Rule{
				condRule(pfp.ActionIgnore, pfp.Condition{Type: "bad type!"}, pfp.Condition{Type: "Ready", Status: "Maybe"}),
				condRule(pfp.ActionIgnore, slices.Repeat([]pfp.Condition{{Type: "Ready"}}, pfp.MaxConditionPatterns+1)...),
			}},
			want: []want{{fielderr.Invalid, "rules[0].onPodConditions[0].type", "bad type!"}, {fielderr.NotSupported, "rules[0].onPodConditions[1].status", pfp.ConditionStatus("Maybe")},
				{fielderr.TooMany, "rules[1].onPodConditions", pfp.MaxConditionPatterns + 1}},
		},
		{
			name: "a rule needs exactly one requirement",
			policy: &pfp.Policy{Rules: []pfp.Rule{{Action: pfp.ActionCount}, {Action: pfp.ActionCount, OnPodConditions: []pfp.Condition{}},
				{Action: pfp.ActionCount, OnExitCodes: &pfp.ExitCodes{Operator: pfp.OpIn, Values: []int32{1}}, OnPodConditions: []pfp.Condition{{Type: "Ready"}}}}},
			want: []want{{fielderr.Invalid, "rules[0]", nil}, {fielderr.Invalid, "rules[1]", nil}, {fielderr.Invalid, "rules[2]", nil}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, e := range pfp.Validate(tc.policy, tc.ctx) {
				got = append(got, want{e.Type, e.Field, e.BadValue})
				if e.Error() == "" || (e.Type != fielderr.Duplicate && e.Detail == "") {
					t.Errorf("error %#v has no text", e)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	errs := pfp.Validate(&pfp.Policy{Rules: []pfp.Rule{exitRule("Retry", pfp.OpIn, "", 1)}}, pfp.Context{})
	want := `podfailurepolicy: rules[0].action: Unsupported value: "Retry": supported values: ["Count" "FailIndex" "FailJob" "Ignore"]`
	if got := errs.Error(); got != want {
		t.Errorf("Validate().Error() = %q, want %q", got, want)
	}
}

// FuzzConditionType checks that the fast path of the label key check agrees with
// its regular expressions (package podfailurepolicy, the Kubernetes face, checks
// the whole against apimachinery).
func FuzzConditionType(f *testing.F) {
	for _, s := range []string{"", "Ready", "DisruptionTarget", "example.com/Custom", "bad type!", "-x", "a/b/c", "x.y_z-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if pfp.IsPlainLabelKeyForTest(s) {
			if errs := pfp.ConditionTypeErrorsForTest(s); len(errs) != 0 {
				t.Fatalf("fast path accepts %q, the full check says %q", s, errs)
			}
			if errs := pfp.ConditionTypeErrorsSlowForTest(s); len(errs) != 0 {
				t.Fatalf("fast path accepts %q, the regular expressions say %q", s, errs)
			}
		}
	})
}
