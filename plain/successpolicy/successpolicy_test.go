package successpolicy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/indexes"
	sp "github.com/jobkit/jobkit/plain/successpolicy"
)

// The API server's limits on a success policy (its validation of batch/v1 Jobs).
const (
	maxRules                  = 20
	maxSucceededIndexesLength = 64 * 1024
)

func listed(s string) *string { return &s }

func count(n int32) *int32 { return &n }

func policy(rules ...sp.Rule) *sp.Policy { return &sp.Policy{Rules: rules} }

func mustParse(t testing.TB, s string) indexes.Intervals {
	t.Helper()
	ivs, err := indexes.Parse(s, indexes.NoLimit)
	require.NoError(t, err)
	return ivs
}

func TestMatch(t *testing.T) {
	cases := []struct {
		name        string
		policy      *sp.Policy
		completions int
		succeeded   string
		wantRule    int
	}{
		{name: "nil policy", completions: 5, succeeded: "0-4", wantRule: -1},
		{name: "nothing succeeded", policy: policy(sp.Rule{SucceededCount: count(0)}), completions: 5, wantRule: -1},
		{name: "count", policy: policy(sp.Rule{SucceededCount: count(3)}), completions: 5, succeeded: "0,2,4", wantRule: 0},
		{name: "count not reached", policy: policy(sp.Rule{SucceededCount: count(4)}), completions: 5, succeeded: "0,2,4", wantRule: -1},
		{name: "succeeded above completions do not count", policy: policy(sp.Rule{SucceededCount: count(2)}), completions: 3, succeeded: "2,5-9", wantRule: -1},
		{name: "every listed index", policy: policy(sp.Rule{SucceededIndexes: listed("1,3")}, sp.Rule{SucceededCount: count(1)}), completions: 5, succeeded: "1,3", wantRule: 0},
		{name: "list and count", policy: policy(sp.Rule{SucceededIndexes: listed("0-3"), SucceededCount: count(2)}), completions: 5, succeeded: "1,3", wantRule: 0},
		{name: "empty list never matches, even with a count", policy: policy(sp.Rule{SucceededIndexes: listed(""), SucceededCount: count(0)}, sp.Rule{SucceededCount: count(1)}),
			completions: 5, succeeded: "0", wantRule: 1},
		{name: "first satisfied rule wins", policy: policy(sp.Rule{SucceededIndexes: listed("4")}, sp.Rule{SucceededCount: count(1)}, sp.Rule{SucceededIndexes: listed("0")}),
			completions: 5, succeeded: "0", wantRule: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := sp.Compile(tc.policy, tc.completions)
			got := c.Match(mustParse(t, tc.succeeded))
			if got.RuleIndex != tc.wantRule || got.Matched != (tc.wantRule >= 0) {
				t.Fatalf("Match() = %+v, want rule %d", got, tc.wantRule)
			}
			if tc.wantRule >= 0 {
				assert.Equal(t, sp.ReasonSuccessPolicy, got.Reason)
				assert.Equal(t, "Matched rules at index "+string(rune('0'+tc.wantRule)), got.Message)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	type want struct {
		Type     fielderr.Type
		Field    string
		BadValue any
	}
	cases := []struct {
		name        string
		policy      *sp.Policy
		completions int
		want        []want
	}{
		{name: "nil", completions: 5},
		{name: "valid", policy: policy(sp.Rule{SucceededIndexes: listed("0,2-4"), SucceededCount: count(2)}, sp.Rule{SucceededCount: count(5)}), completions: 5},
		{name: "no rules", policy: policy(), completions: 5, want: []want{{fielderr.Required, "rules", nil}}},
		{name: "too many rules", policy: &sp.Policy{Rules: make([]sp.Rule, maxRules+1)}, completions: 5,
			want: func() []want {
				w := []want{{fielderr.TooMany, "rules", maxRules + 1}}
				for i := range maxRules + 1 {
					w = append(w, want{fielderr.Required, "rules[" + itoa(i) + "]", nil})
				}
				return w
			}()},
		{name: "index too large, count above completions and the list", policy: policy(sp.Rule{SucceededIndexes: listed("0-2,7"), SucceededCount: count(6)}), completions: 5,
			want: []want{{fielderr.Invalid, "rules[0].succeededIndexes", "0-2,7"}, {fielderr.Invalid, "rules[0].succeededCount", int32(6)}, {fielderr.Invalid, "rules[0].succeededCount", int32(6)}}},
		{name: "negative count", policy: policy(sp.Rule{SucceededCount: count(-1)}), completions: 5,
			want: []want{{fielderr.Invalid, "rules[0].succeededCount", int64(-1)}}},
		{name: "too long", policy: policy(sp.Rule{SucceededIndexes: listed(strings.Repeat("1", maxSucceededIndexesLength+1))}), completions: sp.UnknownCompletions,
			want: []want{{fielderr.TooLong, "rules[0].succeededIndexes", strings.Repeat("1", maxSucceededIndexesLength+1)},
				{fielderr.Invalid, "rules[0].succeededIndexes", strings.Repeat("1", maxSucceededIndexesLength+1)}}},
		{name: "unknown completions: the count is only checked against the list", policy: policy(sp.Rule{SucceededIndexes: listed("0-9"), SucceededCount: count(10)}, sp.Rule{SucceededCount: count(1 << 30)}),
			completions: sp.UnknownCompletions},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, e := range sp.Validate(tc.policy, tc.completions) {
				got = append(got, want{e.Type, e.Field, e.BadValue})
				assert.NotEmpty(t, e.Detail, "error %v has no detail", e)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Validate() (-want +got):\n%s", diff)
			}
		})
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestCompileRejectsWhatValidateRejects: Compile returns an error exactly when
// Validate rejects the policy, for policies the index reader alone accepts too.
func TestCompileRejectsWhatValidateRejects(t *testing.T) {
	cases := []struct {
		name          string
		policy        *sp.Policy
		completions   int
		wantRuleError bool
	}{
		{name: "valid", policy: policy(sp.Rule{SucceededIndexes: listed("0-3"), SucceededCount: count(2)}), completions: 5},
		{name: "no rules", policy: policy(), completions: 5},
		{name: "a rule with neither field", policy: policy(sp.Rule{}), completions: 5},
		{name: "count above completions", policy: policy(sp.Rule{SucceededCount: count(6)}), completions: 5},
		{name: "count above the listed indexes", policy: policy(sp.Rule{SucceededIndexes: listed("1,2"), SucceededCount: count(3)}), completions: 5},
		{name: "negative count", policy: policy(sp.Rule{SucceededCount: count(-1)}), completions: 5},
		{name: "too many rules", policy: &sp.Policy{Rules: func() []sp.Rule {
			r := make([]sp.Rule, maxRules+1)
			for i := range r {
				r[i].SucceededCount = count(1)
			}
			return r
		}()}, completions: 5},
		{name: "unreadable list", policy: policy(sp.Rule{SucceededIndexes: listed("1,x")}), completions: 5, wantRuleError: true},
		{name: "index out of range", policy: policy(sp.Rule{SucceededIndexes: listed("9")}), completions: 5, wantRuleError: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			verrs := sp.Validate(tc.policy, tc.completions)
			c, err := sp.Compile(tc.policy, tc.completions)
			require.NotNil(t, c, "Compile returns a usable policy even on error")
			if (err != nil) != (len(verrs) > 0) {
				t.Fatalf("Compile() error = %v, Validate() = %v: they must reject the same policies", err, verrs)
			}
			if err == nil {
				return
			}
			var re *sp.RuleError
			if got := errors.As(err, &re); got != tc.wantRuleError {
				t.Errorf("Compile() error %v: errors.As(*RuleError) = %v, want %v", err, got, tc.wantRuleError)
			}
			var es sp.Errors
			if !tc.wantRuleError && !errors.As(err, &es) {
				t.Errorf("Compile() error %v is not Validate's Errors", err)
			}
		})
	}
}

func TestCompiledMatchDoesNotAllocate(t *testing.T) {
	c, err := sp.Compile(policy(sp.Rule{SucceededIndexes: listed("0-999"), SucceededCount: count(900)}, sp.Rule{SucceededCount: count(500)}), 1000)
	require.NoError(t, err)
	succeeded := mustParse(t, "0-499")
	var got sp.Result
	assert.Zero(t, testing.AllocsPerRun(100, func() { got = c.Match(succeeded) }))
	assert.Equal(t, 1, got.RuleIndex)
}

// FuzzCompileValidate checks over single-rule policies that Compile errs exactly when
// Validate rejects, and that a valid policy matches once every index succeeded.
func FuzzCompileValidate(f *testing.F) {
	f.Add("1,3-5", int32(2), uint16(10), uint8(3))
	f.Add("", int32(0), uint16(1), uint8(3))
	f.Add("+1,00000000002,1-2-3", int32(-1), uint16(5), uint8(3))
	f.Add("0-9", int32(11), uint16(10), uint8(2))
	f.Fuzz(func(t *testing.T, list string, n int32, completions uint16, flags uint8) {
		var r sp.Rule
		if flags&1 != 0 {
			r.SucceededIndexes = &list
		}
		if flags&2 != 0 {
			r.SucceededCount = &n
		}
		p := policy(r)
		comp := int(completions % 4096)
		verrs := sp.Validate(p, comp)
		c, err := sp.Compile(p, comp)
		if c == nil || (err != nil) != (len(verrs) > 0) {
			t.Fatalf("Compile(%+v, %d) = %v, %v; Validate = %v", r, comp, c, err, verrs)
		}
		if err != nil || comp == 0 || (r.SucceededIndexes != nil && *r.SucceededIndexes == "") {
			return
		}
		if got := c.Match(indexes.Intervals{{First: 0, Last: comp - 1}}); !got.Matched {
			t.Fatalf("valid rule %+v with completions %d does not match when every index succeeded", r, comp)
		}
	})
}
