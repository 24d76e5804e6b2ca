package successpolicy_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	plainsp "github.com/jobkit/jobkit/plain/successpolicy"
	"github.com/jobkit/jobkit/successpolicy"
)

// rule builds a SuccessPolicyRule; an indexes value of "-" means unset and a nil count
// means unset.
func rule(idx string, count *int32) batchv1.SuccessPolicyRule {
	r := batchv1.SuccessPolicyRule{SucceededCount: count}
	if idx != "-" {
		r.SucceededIndexes = ptr.To(idx)
	}
	return r
}

func policy(rules ...batchv1.SuccessPolicyRule) *batchv1.SuccessPolicy {
	return &batchv1.SuccessPolicy{Rules: rules}
}

func mustParse(t testing.TB, s string) plainindexes.Intervals {
	t.Helper()
	ivs, err := plainindexes.Parse(s, plainindexes.NoLimit)
	require.NoError(t, err, "plainindexes.Parse(%q)", s)
	return ivs
}

func matched(rule int) plainsp.Result {
	return plainsp.Result{
		Matched:   true,
		RuleIndex: rule,
		Reason:    batchv1.JobReasonSuccessPolicy,
		Message:   "Matched rules at index " + strconv.Itoa(rule),
	}
}

var noMatch = plainsp.Result{RuleIndex: -1}

// plainPolicy is the policy's rules as plain rules, written here apart from the
// package's own conversion so that the two are compared.
func plainPolicy(policy *batchv1.SuccessPolicy) *plainsp.Policy {
	if policy == nil {
		return nil
	}
	p := &plainsp.Policy{}
	for _, r := range policy.Rules {
		p.Rules = append(p.Rules, plainsp.Rule{SucceededIndexes: r.SucceededIndexes, SucceededCount: r.SucceededCount})
	}
	return p
}

// match is the plain rule over the converted policy, compiled at every call.
func match(policy *batchv1.SuccessPolicy, completions int, succeeded plainindexes.Intervals) plainsp.Result {
	c, _ := plainsp.Compile(plainPolicy(policy), completions)
	return c.Match(succeeded)
}

func TestMatch(t *testing.T) {
	cases := []struct {
		name        string
		policy      *batchv1.SuccessPolicy
		completions int
		succeeded   string
		want        plainsp.Result
	}{
		{
			name:        "nil policy",
			completions: 10,
			succeeded:   "0-9",
			want:        noMatch,
		},
		{
			name:        "no rules",
			policy:      policy(),
			completions: 10,
			succeeded:   "0-9",
			want:        noMatch,
		},
		{
			name:        "indexes only, all listed succeeded",
			policy:      policy(rule("1,3-5", nil)),
			completions: 10,
			succeeded:   "0-5",
			want:        matched(0),
		},
		{
			name:        "indexes only, one listed index missing",
			policy:      policy(rule("1,3-5", nil)),
			completions: 10,
			succeeded:   "1,3,4,6-9",
			want:        noMatch,
		},
		{
			name:        "indexes only, one succeeded interval spans several listed ones",
			policy:      policy(rule("1,3,5,7", nil)),
			completions: 10,
			succeeded:   "0-9",
			want:        matched(0),
		},
		{
			name:        "indexes only, last listed index missing after a spanning interval",
			policy:      policy(rule("1,3,5,7", nil)),
			completions: 10,
			succeeded:   "0-5",
			want:        noMatch,
		},
		{
			name:        "count only, reached",
			policy:      policy(rule("-", ptr.To[int32](3))),
			completions: 10,
			succeeded:   "2,5,7",
			want:        matched(0),
		},
		{
			name:        "count only, one short",
			policy:      policy(rule("-", ptr.To[int32](4))),
			completions: 10,
			succeeded:   "2,5,7",
			want:        noMatch,
		},
		{
			name:        "count only, indexes at or above completions are not counted",
			policy:      policy(rule("-", ptr.To[int32](3))),
			completions: 3,
			succeeded:   "1,5,6",
			want:        noMatch,
		},
		{
			name:        "count only, negative count matches once something succeeded",
			policy:      policy(rule("-", ptr.To[int32](-1))),
			completions: 10,
			succeeded:   "0",
			want:        matched(0),
		},
		{
			name:        "both, overlap below count (the API documentation's example)",
			policy:      policy(rule("1-4", ptr.To[int32](3))),
			completions: 10,
			succeeded:   "1,3,5",
			want:        noMatch,
		},
		{
			name:        "both, overlap at count",
			policy:      policy(rule("1-4", ptr.To[int32](2))),
			completions: 10,
			succeeded:   "1,3,5",
			want:        matched(0),
		},
		{
			name:        "both, overlap above count",
			policy:      policy(rule("0-9", ptr.To[int32](5))),
			completions: 10,
			succeeded:   "0,2,4,6,8,9",
			want:        matched(0),
		},
		{
			name:        "both, alternating succeeded one short of count",
			policy:      policy(rule("0-9", ptr.To[int32](6))),
			completions: 10,
			succeeded:   "0,2,4,6,8",
			want:        noMatch,
		},
		{
			name:        "both, count above the listed indexes matches when all listed succeeded",
			policy:      policy(rule("1,2", ptr.To[int32](5))),
			completions: 10,
			succeeded:   "1,2",
			want:        matched(0),
		},
		{
			name:        "both, count zero matches once anything succeeded",
			policy:      policy(rule("1-4", ptr.To[int32](0))),
			completions: 10,
			succeeded:   "7",
			want:        matched(0),
		},
		{
			name: "first match wins",
			policy: policy(
				rule("-", ptr.To[int32](100)),
				rule("0", nil),
				rule("-", ptr.To[int32](1)),
			),
			completions: 10,
			succeeded:   "0",
			want:        matched(1),
		},
		{
			name: "later rule matches when earlier ones do not",
			policy: policy(
				rule("0-4", nil),
				rule("5-9", ptr.To[int32](3)),
				rule("-", ptr.To[int32](1)),
			),
			completions: 10,
			succeeded:   "1,6-8",
			want:        matched(1),
		},
		{
			name:        "listed indexes partly out of range are trimmed to completions",
			policy:      policy(rule("3-9", nil)),
			completions: 5,
			succeeded:   "3,4",
			want:        matched(0),
		},
		{
			name: "listed indexes all out of range: the rule is skipped even with a count",
			policy: policy(
				rule("7-9", ptr.To[int32](0)),
				rule("-", ptr.To[int32](1)),
			),
			completions: 5,
			succeeded:   "0",
			want:        matched(1),
		},
		{
			name:        "empty listed string is skipped even with count zero",
			policy:      policy(rule("", ptr.To[int32](0))),
			completions: 5,
			succeeded:   "0-4",
			want:        noMatch,
		},
		{
			name:        "invalid listed string: its valid part is used",
			policy:      policy(rule("1,x,3", nil)),
			completions: 5,
			succeeded:   "1,3",
			want:        matched(0),
		},
		{
			name: "rule with neither field never matches",
			policy: policy(
				rule("-", nil),
				rule("-", ptr.To[int32](1)),
			),
			completions: 5,
			succeeded:   "0",
			want:        matched(1),
		},
		{
			name:        "empty succeeded matches nothing, not even count zero",
			policy:      policy(rule("-", ptr.To[int32](0))),
			completions: 5,
			succeeded:   "",
			want:        noMatch,
		},
		{
			name:        "succeeded only at or above completions matches nothing",
			policy:      policy(rule("-", ptr.To[int32](0))),
			completions: 5,
			succeeded:   "5-9",
			want:        noMatch,
		},
		{
			name:        "zero completions matches nothing",
			policy:      policy(rule("-", ptr.To[int32](0))),
			completions: 0,
			succeeded:   "0",
			want:        noMatch,
		},
		{
			name:        "negative completions matches nothing",
			policy:      policy(rule("-", ptr.To[int32](0))),
			completions: -3,
			succeeded:   "0",
			want:        noMatch,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			succeeded := mustParse(t, tc.succeeded)
			got := match(tc.policy, tc.completions, succeeded)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Match(%q) (-want +got):\n%s", tc.succeeded, diff)
			}
			c, _ := successpolicy.Compile(tc.policy, tc.completions)
			if diff := cmp.Diff(got, c.Match(succeeded)); diff != "" {
				t.Errorf("Compiled.Match(%q) disagrees with Match (-plain +compiled):\n%s", tc.succeeded, diff)
			}
		})
	}
}

func TestMatchMessageForLaterRules(t *testing.T) {
	rules := make([]batchv1.SuccessPolicyRule, 13)
	for i := range rules {
		rules[i] = rule("-", ptr.To[int32](100))
	}
	rules[12] = rule("4", nil)
	got := match(policy(rules...), 10, mustParse(t, "4"))
	assert.Equal(t, "Matched rules at index 12", got.Message)
	assert.Equal(t, 12, got.RuleIndex)
}

func TestMatchDoesNotModifyInputs(t *testing.T) {
	p := policy(rule("1,3-5", ptr.To[int32](2)), rule("-", ptr.To[int32](1)))
	before := p.DeepCopy()
	succeeded := mustParse(t, "1,3,5-7")
	succeededBefore := append(plainindexes.Intervals(nil), succeeded...)
	match(p, 10, succeeded)
	assert.Equal(t, before, p)
	assert.Equal(t, succeededBefore, succeeded)
}

func TestNilCompiled(t *testing.T) {
	c, err := successpolicy.Compile(nil, 10)
	require.NoError(t, err)
	assert.Nil(t, c)
	assert.Equal(t, noMatch, c.Match(mustParse(t, "0-9")))
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name        string
		policy      *batchv1.SuccessPolicy
		completions int
		wantRules   []int
		wantValues  []string
		wantTexts   []string
	}{
		{
			name:        "valid policy",
			policy:      policy(rule("0,2-4", ptr.To[int32](2)), rule("-", ptr.To[int32](1))),
			completions: 5,
		},
		{
			name:        "empty succeededIndexes is no error",
			policy:      policy(rule("", nil)),
			completions: 5,
		},
		{
			name:        "one bad part",
			policy:      policy(rule("-", ptr.To[int32](1)), rule("1,x,3", nil)),
			completions: 5,
			wantRules:   []int{1},
			wantValues:  []string{"1,x,3"},
			wantTexts: []string{
				`spec.successPolicy.rules[1].succeededIndexes: invalid index intervals "1,x,3": part 1 "x": not a non-negative decimal number`,
			},
		},
		{
			name:        "out-of-range index and a bad rule after it",
			policy:      policy(rule("3-9", nil), rule("-", nil), rule("2,1", nil)),
			completions: 5,
			wantRules:   []int{0, 2},
			wantValues:  []string{"3-9", "2,1"},
			wantTexts: []string{
				`spec.successPolicy.rules[0].succeededIndexes: invalid index intervals "3-9": part 0 "3-9": index out of range: must be below 5`,
				`spec.successPolicy.rules[2].succeededIndexes: invalid index intervals "2,1": part 1 "1": not in increasing order`,
			},
		},
		{
			name:        "zero completions: every listed index is out of range",
			policy:      policy(rule("0", nil)),
			completions: 0,
			wantRules:   []int{0},
			wantValues:  []string{"0"},
			wantTexts: []string{
				`spec.successPolicy.rules[0].succeededIndexes: invalid index intervals "0": part 0 "0": index out of range: must be below 0`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.policy.DeepCopy()
			c, err := successpolicy.Compile(tc.policy, tc.completions)
			require.NotNil(t, c, "Compile returns a usable policy even on error")
			assert.Equal(t, before, tc.policy, "Compile modified its input")
			if len(tc.wantRules) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ruleErrs []error
			if joined, ok := err.(interface{ Unwrap() []error }); ok {
				ruleErrs = joined.Unwrap()
			}
			require.Len(t, ruleErrs, len(tc.wantRules), "Compile() error = %v", err)
			for i, e := range ruleErrs {
				var re *plainsp.RuleError
				require.True(t, errors.As(e, &re), "error %v is not a *plainsp.RuleError", e)
				assert.Equal(t, tc.wantRules[i], re.Rule)
				assert.Equal(t, tc.wantValues[i], re.Value)
				assert.Equal(t, tc.wantTexts[i], e.Error())
				var pe *plainindexes.ParseError
				assert.True(t, errors.As(e, &pe), "RuleError does not unwrap to *plainindexes.ParseError")
			}
		})
	}
}

func TestCompiledMatchDoesNotAllocate(t *testing.T) {
	rules := make([]batchv1.SuccessPolicyRule, 0, 20)
	for i := range 19 {
		switch i % 3 {
		case 0:
			rules = append(rules, rule("0-1999", nil))
		case 1:
			rules = append(rules, rule("0-1999", ptr.To[int32](1001)))
		default:
			rules = append(rules, rule("-", ptr.To[int32](1001)))
		}
	}
	rules = append(rules, rule("-", ptr.To[int32](1000)))
	c, err := successpolicy.Compile(policy(rules...), 2000)
	require.NoError(t, err)
	succeeded := alternating(1000)
	var got plainsp.Result
	allocs := testing.AllocsPerRun(100, func() { got = c.Match(succeeded) })
	assert.Zero(t, allocs, "Compiled.Match allocations")
	assert.Equal(t, 19, got.RuleIndex)
}

// alternating returns n single-index intervals 0, 2, 4, ..., the worst shape of n
// succeeded indexes.
func alternating(n int) plainindexes.Intervals {
	ivs := make(plainindexes.Intervals, n)
	for i := range ivs {
		ivs[i] = plainindexes.Interval{First: 2 * i, Last: 2 * i}
	}
	return ivs
}

func TestMatchSparseListsOverManySucceeded(t *testing.T) {
	succeeded := alternating(5000) // 0, 2, ..., 9998
	cases := []struct {
		name   string
		listed string
		count  *int32
		want   bool
	}{
		{name: "far apart, all even", listed: "0,4000,9998", want: true},
		{name: "one odd index far out", listed: "0,4000,9997", want: false},
		{name: "range with gaps, count reached by the last index", listed: "1000,5000-5002", count: ptr.To[int32](3), want: true},
		{name: "range with gaps, count one short", listed: "1000,5000-5002,7001", count: ptr.To[int32](4), want: false},
		{name: "whole range, half succeeded", listed: "0-9999", count: ptr.To[int32](5000), want: true},
		{name: "whole range, one more than half", listed: "0-9999", count: ptr.To[int32](5001), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := successpolicy.Compile(policy(rule(tc.listed, tc.count)), 10_000)
			require.NoError(t, err)
			got := c.Match(succeeded)
			assert.Equal(t, tc.want, got.Matched, "Compiled.Match(alternating 0..9998) with listed %q", tc.listed)
		})
	}
}
