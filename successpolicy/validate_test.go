package successpolicy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/successpolicy"
)

func indexedSpec(completions int32, p *batchv1.SuccessPolicy) *batchv1.JobSpec {
	return &batchv1.JobSpec{
		CompletionMode: ptr.To(batchv1.IndexedCompletion),
		Completions:    ptr.To(completions),
		Parallelism:    ptr.To[int32](1),
		SuccessPolicy:  p,
	}
}

// paddedList returns a valid, strictly increasing index list of exactly size bytes
// (size >= 64 KiB), all indexes below 20_000_000: 7-digit indexes then 8-digit ones.
func paddedList(t testing.TB, size int) string {
	t.Helper()
	// length = 8*n7 + 9*n8 - 1
	n8 := 1
	for (size+1-9*n8)%8 != 0 {
		n8++
	}
	n7 := (size + 1 - 9*n8) / 8
	parts := make([]string, 0, n7+n8)
	for i := range n7 {
		parts = append(parts, strconv.Itoa(1_000_000+2*i))
	}
	for i := range n8 {
		parts = append(parts, strconv.Itoa(10_000_000+2*i))
	}
	s := strings.Join(parts, ",")
	require.Len(t, s, size)
	return s
}

func TestValidate(t *testing.T) {
	sp := field.NewPath("spec", "successPolicy")
	rules := sp.Child("rules")
	idxPath := func(i int) *field.Path { return rules.Index(i).Child("succeededIndexes") }
	countPath := func(i int) *field.Path { return rules.Index(i).Child("succeededCount") }
	parseErr := func(i int, value, detail string) *field.Error {
		return field.Invalid(idxPath(i), value, "error parsing succeededIndexes: "+detail)
	}
	negative := func(i int, v int64) *field.Error {
		return field.Invalid(countPath(i), v, "must be greater than or equal to 0").WithOrigin("minimum")
	}
	aboveCompletions := func(i int, v int32, completions int) *field.Error {
		return field.Invalid(countPath(i), v, "must be less than or equal to "+strconv.Itoa(completions)+" (the number of specified completions)")
	}
	aboveListed := func(i int, v int32, listed int) *field.Error {
		return field.Invalid(countPath(i), v, "must be less than or equal to "+strconv.Itoa(listed)+" (the number of indexes in the specified succeededIndexes field)")
	}
	twentyRules := make([]batchv1.SuccessPolicyRule, 20)
	for i := range twentyRules {
		twentyRules[i] = rule(strconv.Itoa(i), nil)
	}
	tooManyRules := append(append([]batchv1.SuccessPolicyRule(nil), twentyRules...), rule("-", nil))
	elevenBad := strings.Repeat("x,", 10) + "x"

	cases := []struct {
		name    string
		spec    *batchv1.JobSpec
		fldPath *field.Path
		want    field.ErrorList
	}{
		{name: "nil spec"},
		{name: "no success policy", spec: indexedSpec(5, nil)},
		{
			name: "valid: indexes and count",
			spec: indexedSpec(5, policy(rule("0,2-4", ptr.To[int32](2)))),
		},
		{
			name: "valid: count equal to completions and to listed indexes",
			spec: indexedSpec(5, policy(rule("-", ptr.To[int32](5)), rule("0-4", ptr.To[int32](5)))),
		},
		{
			name: "valid: count zero",
			spec: indexedSpec(5, policy(rule("-", ptr.To[int32](0)))),
		},
		{
			name: "valid: empty succeededIndexes",
			spec: indexedSpec(5, policy(rule("", nil))),
		},
		{
			name: "valid: adjacent parts and leading zeros as the API server reads them",
			spec: indexedSpec(10, policy(rule("1,2,3-5,007", nil))),
		},
		{
			name: "valid: twenty rules",
			spec: indexedSpec(20, policy(twentyRules...)),
		},
		{
			name: "valid: succeededIndexes of exactly 64 KiB",
			spec: indexedSpec(20_000_000, policy(rule(paddedList(t, 65536), nil))),
		},
		{
			name: "valid: no completions and no parallelism default completions to 1",
			spec: &batchv1.JobSpec{
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				SuccessPolicy:  policy(rule("0", ptr.To[int32](1))),
			},
		},
		{
			name: "not indexed: completion mode unset",
			spec: &batchv1.JobSpec{Completions: ptr.To[int32](5), SuccessPolicy: policy()},
			want: field.ErrorList{field.Invalid(sp, batchv1.SuccessPolicy{}, "requires indexed completion mode")},
		},
		{
			name: "not indexed: NonIndexed, no other check",
			spec: &batchv1.JobSpec{
				CompletionMode: ptr.To(batchv1.NonIndexedCompletion),
				Completions:    ptr.To[int32](5),
				SuccessPolicy:  policy(rule("-", nil)),
			},
			want: field.ErrorList{field.Invalid(sp, *policy(rule("-", nil)), "requires indexed completion mode")},
		},
		{
			name:    "not indexed, under a CronJob's path",
			spec:    &batchv1.JobSpec{SuccessPolicy: policy()},
			fldPath: field.NewPath("spec", "jobTemplate", "spec"),
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "jobTemplate", "spec", "successPolicy"),
				batchv1.SuccessPolicy{}, "requires indexed completion mode")},
		},
		{
			name:    "custom path is used for rule errors",
			spec:    indexedSpec(5, policy(rule("-", nil))),
			fldPath: field.NewPath("spec", "jobTemplate", "spec"),
			want: field.ErrorList{field.Required(field.NewPath("spec", "jobTemplate", "spec", "successPolicy", "rules").Index(0),
				"at least one of succeededCount or succeededIndexes must be specified")},
		},
		{
			name: "no rules",
			spec: indexedSpec(5, policy()),
			want: field.ErrorList{field.Required(rules, "at least one rules must be specified when the successPolicy is specified")},
		},
		{
			name: "too many rules, and every rule is still checked",
			spec: indexedSpec(20, policy(tooManyRules...)),
			want: field.ErrorList{
				field.TooMany(rules, 21, 20),
				field.Required(rules.Index(20), "at least one of succeededCount or succeededIndexes must be specified"),
			},
		},
		{
			name: "rule with neither field",
			spec: indexedSpec(5, policy(rule("0", nil), rule("-", nil))),
			want: field.ErrorList{field.Required(rules.Index(1), "at least one of succeededCount or succeededIndexes must be specified")},
		},
		{
			name: "succeededIndexes longer than 64 KiB",
			spec: indexedSpec(20_000_000, policy(rule(paddedList(t, 65537), nil))),
			want: field.ErrorList{field.TooLong(idxPath(0), "", 65536)},
		},
		{
			name: "more than two parts separated by '-'",
			spec: indexedSpec(10, policy(rule("1-2-3", nil))),
			want: field.ErrorList{parseErr(0, "1-2-3", `the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`)},
		},
		{
			name: "not a number",
			spec: indexedSpec(10, policy(rule("a", nil))),
			want: field.ErrorList{parseErr(0, "a", `cannot convert string to integer for index: "a"`)},
		},
		{
			name: "empty part",
			spec: indexedSpec(10, policy(rule("1,,2", nil))),
			want: field.ErrorList{parseErr(0, "1,,2", `cannot convert string to integer for index: ""`)},
		},
		{
			name: "range without an end",
			spec: indexedSpec(10, policy(rule("1-", nil))),
			want: field.ErrorList{parseErr(0, "1-", `cannot convert string to integer for index: ""`)},
		},
		{
			name: "negative index",
			spec: indexedSpec(10, policy(rule("-1", nil))),
			want: field.ErrorList{parseErr(0, "-1", `cannot convert string to integer for index: ""`)},
		},
		{
			name: "number too large for any integer",
			spec: indexedSpec(10, policy(rule("99999999999999999999", nil))),
			want: field.ErrorList{parseErr(0, "99999999999999999999", `cannot convert string to integer for index: "99999999999999999999"`)},
		},
		{
			name: "index equal to completions",
			spec: indexedSpec(5, policy(rule("5", nil))),
			want: field.ErrorList{parseErr(0, "5", `too large index: "5"`)},
		},
		{
			name: "range end at completions",
			spec: indexedSpec(5, policy(rule("1-5", nil))),
			want: field.ErrorList{parseErr(0, "1-5", `too large index: "5"`)},
		},
		{
			name: "parts out of order",
			spec: indexedSpec(10, policy(rule("3,1", nil))),
			want: field.ErrorList{parseErr(0, "3,1", "non-increasing order, previous: 3, current: 1")},
		},
		{
			name: "overlapping parts",
			spec: indexedSpec(10, policy(rule("1-3,3", nil))),
			want: field.ErrorList{parseErr(0, "1-3,3", "non-increasing order, previous: 3, current: 3")},
		},
		{
			name: "range of one index",
			spec: indexedSpec(10, policy(rule("3-3", nil))),
			want: field.ErrorList{parseErr(0, "3-3", "non-increasing order, previous: 3, current: 3")},
		},
		{
			name: "decreasing range",
			spec: indexedSpec(10, policy(rule("4-2", nil))),
			want: field.ErrorList{parseErr(0, "4-2", "non-increasing order, previous: 4, current: 2")},
		},
		{
			name: "plus sign (accepted by the API server, refused here)",
			spec: indexedSpec(10, policy(rule("+3", nil))),
			want: field.ErrorList{parseErr(0, "+3", `cannot convert string to integer for index: "+3"`)},
		},
		{
			name: "more than ten digits (accepted by the API server, refused by plainindexes.Parse)",
			spec: indexedSpec(10, policy(rule("00000000003", nil))),
			want: field.ErrorList{parseErr(0, "00000000003", `part 0 "00000000003": not a non-negative decimal number`)},
		},
		{
			name: "every problem of the string is listed",
			spec: indexedSpec(5, policy(rule("a,9,1,0", nil))),
			want: field.ErrorList{parseErr(0, "a,9,1,0", `cannot convert string to integer for index: "a"; too large index: "9"; non-increasing order, previous: 1, current: 0`)},
		},
		{
			name: "problems beyond ten are counted",
			spec: indexedSpec(5, policy(rule(elevenBad, nil))),
			want: field.ErrorList{parseErr(0, elevenBad, strings.Repeat(`cannot convert string to integer for index: "x"; `, 10)+"and 1 more")},
		},
		{
			name: "unparsable succeededIndexes counts as zero indexes for succeededCount",
			spec: indexedSpec(5, policy(rule("x", ptr.To[int32](1)))),
			want: field.ErrorList{
				parseErr(0, "x", `cannot convert string to integer for index: "x"`),
				aboveListed(0, 1, 0),
			},
		},
		{
			name: "negative count",
			spec: indexedSpec(5, policy(rule("-", ptr.To[int32](-1)))),
			want: field.ErrorList{negative(0, -1)},
		},
		{
			name: "count above completions",
			spec: indexedSpec(5, policy(rule("-", ptr.To[int32](6)))),
			want: field.ErrorList{aboveCompletions(0, 6, 5)},
		},
		{
			name: "count above listed indexes",
			spec: indexedSpec(5, policy(rule("0,2-3", ptr.To[int32](4)))),
			want: field.ErrorList{aboveListed(0, 4, 3)},
		},
		{
			name: "count above completions and listed indexes",
			spec: indexedSpec(5, policy(rule("1", ptr.To[int32](7)))),
			want: field.ErrorList{aboveCompletions(0, 7, 5), aboveListed(0, 7, 1)},
		},
		{
			name: "count above listed when succeededIndexes is empty",
			spec: indexedSpec(5, policy(rule("", ptr.To[int32](1)))),
			want: field.ErrorList{aboveListed(0, 1, 0)},
		},
		{
			name: "defaulted completions of 1",
			spec: &batchv1.JobSpec{
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				SuccessPolicy:  policy(rule("-", ptr.To[int32](2))),
			},
			want: field.ErrorList{aboveCompletions(0, 2, 1)},
		},
		{
			name: "parallelism without completions: Required, and no completions checks",
			spec: &batchv1.JobSpec{
				CompletionMode: ptr.To(batchv1.IndexedCompletion),
				Parallelism:    ptr.To[int32](3),
				SuccessPolicy:  policy(rule("100", ptr.To[int32](5))),
			},
			want: field.ErrorList{
				field.Required(field.NewPath("spec", "completions"), "when completion mode is Indexed"),
				aboveListed(0, 5, 1),
			},
		},
		{
			name: "every error of every rule is reported",
			spec: indexedSpec(5, policy(
				rule("-", nil),
				rule("1,1", ptr.To[int32](-2)),
				rule("0-4", ptr.To[int32](6)),
			)),
			want: field.ErrorList{
				field.Required(rules.Index(0), "at least one of succeededCount or succeededIndexes must be specified"),
				parseErr(1, "1,1", "non-increasing order, previous: 1, current: 1"),
				negative(1, -2),
				aboveCompletions(2, 6, 5),
				aboveListed(2, 6, 5),
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before *batchv1.JobSpec
			if tc.spec != nil {
				before = tc.spec.DeepCopy()
			}
			got := successpolicy.Validate(tc.spec, tc.fldPath)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
			assert.Equal(t, before, tc.spec, "Validate modified its input")
			if len(got) > 0 || tc.spec == nil {
				return
			}
			// A policy the API server accepts compiles cleanly.
			completions := 1
			if tc.spec.Completions != nil {
				completions = int(*tc.spec.Completions)
			}
			_, err := successpolicy.Compile(tc.spec.SuccessPolicy, completions)
			assert.NoError(t, err, "Compile of a valid policy")
		})
	}
}

func TestValidateErrorStrings(t *testing.T) {
	// The rendered form callers log or return to users, checked once end to end.
	errs := successpolicy.Validate(indexedSpec(5, policy(rule("1,1", ptr.To[int32](6)))), nil)
	want := []string{
		`spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1,1": error parsing succeededIndexes: non-increasing order, previous: 1, current: 1`,
		`spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)`,
		`spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 0 (the number of indexes in the specified succeededIndexes field)`,
	}
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = e.Error()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() error strings (-want +got):\n%s", diff)
	}
}

// TestCompileRejectsWhatValidateRejects: for an Indexed Job, Compile returns an error
// exactly when Validate rejects the policy, also for policies whose index lists read
// fine (before the plain layer, Compile only reported unreadable lists).
func TestCompileRejectsWhatValidateRejects(t *testing.T) {
	cases := []struct {
		name   string
		policy *batchv1.SuccessPolicy
	}{
		{name: "valid", policy: policy(rule("0-3", ptr.To[int32](2)))},
		{name: "no rules", policy: policy()},
		{name: "a rule with neither field", policy: policy(rule("-", nil))},
		{name: "count above completions", policy: policy(rule("-", ptr.To[int32](6)))},
		{name: "count above the listed indexes", policy: policy(rule("1,2", ptr.To[int32](3)))},
		{name: "negative count", policy: policy(rule("-", ptr.To[int32](-1)))},
		{name: "unreadable list", policy: policy(rule("1,x", nil))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			verrs := successpolicy.Validate(indexedSpec(5, tc.policy), nil)
			_, err := successpolicy.Compile(tc.policy, 5)
			if (err != nil) != (len(verrs) > 0) {
				t.Fatalf("Compile() error = %v, Validate() = %v: they must reject the same policies", err, verrs)
			}
			if err != nil && len(verrs) > 0 && !strings.Contains(err.Error(), "spec.successPolicy.rules") {
				t.Errorf("Compile() error %q does not name the field", err)
			}
		})
	}
}
