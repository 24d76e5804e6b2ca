package indexes

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iv builds Intervals from pairs: iv(1, 1, 3, 5) is {1}, {3-5}.
func iv(bounds ...int) Intervals {
	if len(bounds)%2 != 0 {
		panic("iv needs pairs")
	}
	var out Intervals
	for i := 0; i < len(bounds); i += 2 {
		out = append(out, Interval{First: bounds[i], Last: bounds[i+1]})
	}
	return out
}

// requireCanonical fails the test unless ivs is sorted, disjoint, non-adjacent and in
// the index range.
func requireCanonical(t testing.TB, ivs Intervals) {
	t.Helper()
	for i, x := range ivs {
		require.GreaterOrEqual(t, x.First, 0, "interval %d of %v below 0", i, ivs)
		require.LessOrEqual(t, x.First, x.Last, "interval %d of %v reversed", i, ivs)
		require.LessOrEqual(t, x.Last, math.MaxInt32, "interval %d of %v above MaxInt32", i, ivs)
		if i > 0 {
			require.Greater(t, x.First, ivs[i-1].Last+1, "intervals %d and %d of %v overlap or touch", i-1, i, ivs)
		}
	}
}

func TestParse(t *testing.T) {
	outOfRange := func(limit string) string { return reasonOutOfRange + ": must be below " + limit }
	cases := []struct {
		name      string
		in        string
		limit     int
		want      Intervals
		wantParts []PartError // nil: no error
	}{
		{name: "empty", in: "", limit: NoLimit, want: nil},
		{name: "single", in: "0", limit: NoLimit, want: iv(0, 0)},
		{name: "status form", in: "1,3-5,7", limit: 10, want: iv(1, 1, 3, 5, 7, 7)},
		{name: "pair merges", in: "1,2", limit: NoLimit, want: iv(1, 2)},
		{name: "adjacent ranges merge", in: "0-2,3-5,6", limit: NoLimit, want: iv(0, 6)},
		{name: "range of one", in: "5-5", limit: NoLimit, want: iv(5, 5)},
		{name: "leading zeros", in: "007", limit: NoLimit, want: iv(7, 7)},
		{name: "max int32", in: "2147483647", limit: NoLimit, want: iv(math.MaxInt32, math.MaxInt32)},
		{name: "other negative limit means no limit", in: "100", limit: -5, want: iv(100, 100)},
		{name: "limit above int32 means no limit", in: "100", limit: math.MaxInt64, want: iv(100, 100)},
		{
			name: "not a number", in: "1,x,3", limit: NoLimit, want: iv(1, 1, 3, 3),
			wantParts: []PartError{{Part: "x", Position: 1, Reason: reasonNotNumber}},
		},
		{
			name: "negative", in: "-1", limit: NoLimit, want: nil,
			wantParts: []PartError{{Part: "-1", Position: 0, Reason: reasonNotNumber}},
		},
		{
			name: "decreasing range", in: "5-3,8", limit: NoLimit, want: iv(8, 8),
			wantParts: []PartError{{Part: "5-3", Position: 0, Reason: reasonDecreasing}},
		},
		{
			name: "overlapping ranges are merged", in: "1-5,3-7", limit: NoLimit, want: iv(1, 7),
			wantParts: []PartError{{Part: "3-7", Position: 1, Reason: reasonOverlapping}},
		},
		{
			name: "repeated index", in: "1,1", limit: NoLimit, want: iv(1, 1),
			wantParts: []PartError{{Part: "1", Position: 1, Reason: reasonOverlapping}},
		},
		{
			name: "contained in previous", in: "1-5,3", limit: NoLimit, want: iv(1, 5),
			wantParts: []PartError{{Part: "3", Position: 1, Reason: reasonOverlapping}},
		},
		{
			name: "out of order is kept", in: "3,1,5", limit: NoLimit, want: iv(1, 1, 3, 3, 5, 5),
			wantParts: []PartError{{Part: "1", Position: 1, Reason: reasonOutOfOrder}},
		},
		{
			name: "out of order adjacent merges", in: "3,2", limit: NoLimit, want: iv(2, 3),
			wantParts: []PartError{{Part: "2", Position: 1, Reason: reasonOutOfOrder}},
		},
		{
			name: "out of range index dropped", in: "1,7", limit: 5, want: iv(1, 1),
			wantParts: []PartError{{Part: "7", Position: 1, Reason: outOfRange("5")}},
		},
		{
			name: "out of range part cut at the limit", in: "0-9", limit: 5, want: iv(0, 4),
			wantParts: []PartError{{Part: "0-9", Position: 0, Reason: outOfRange("5")}},
		},
		{
			name: "limit zero", in: "0", limit: 0, want: nil,
			wantParts: []PartError{{Part: "0", Position: 0, Reason: outOfRange("0")}},
		},
		{
			name: "empty piece", in: "1,,2", limit: NoLimit, want: iv(1, 2),
			wantParts: []PartError{{Part: "", Position: 1, Reason: reasonEmpty}},
		},
		{
			name: "trailing comma", in: "1,", limit: NoLimit, want: iv(1, 1),
			wantParts: []PartError{{Part: "", Position: 1, Reason: reasonEmpty}},
		},
		{
			name: "leading comma", in: ",1", limit: NoLimit, want: iv(1, 1),
			wantParts: []PartError{{Part: "", Position: 0, Reason: reasonEmpty}},
		},
		{
			name: "only a comma", in: ",", limit: NoLimit, want: nil,
			wantParts: []PartError{{Part: "", Position: 0, Reason: reasonEmpty}, {Part: "", Position: 1, Reason: reasonEmpty}},
		},
		{
			name: "three dashes", in: "1-2-3", limit: NoLimit, want: nil,
			wantParts: []PartError{{Part: "1-2-3", Position: 0, Reason: reasonTooManyDash}},
		},
		{
			name: "spaces", in: " 1,2 ,3 - 4", limit: NoLimit, want: nil,
			wantParts: []PartError{
				{Part: " 1", Position: 0, Reason: reasonNotNumber},
				{Part: "2 ", Position: 1, Reason: reasonNotNumber},
				{Part: "3 - 4", Position: 2, Reason: reasonNotNumber},
			},
		},
		{
			name: "plus sign", in: "+1,2-+3", limit: NoLimit, want: nil,
			wantParts: []PartError{
				{Part: "+1", Position: 0, Reason: reasonNotNumber},
				{Part: "2-+3", Position: 1, Reason: reasonNotNumber},
			},
		},
		{
			name: "huge numbers", in: "99999999999,2147483648,1-2147483648,0", limit: NoLimit, want: iv(0, 0),
			wantParts: []PartError{
				{Part: "99999999999", Position: 0, Reason: reasonNotNumber},
				{Part: "2147483648", Position: 1, Reason: reasonNotNumber},
				{Part: "1-2147483648", Position: 2, Reason: reasonNotNumber},
			},
		},
		{
			name: "missing range ends", in: "1-,-", limit: NoLimit, want: nil,
			wantParts: []PartError{
				{Part: "1-", Position: 0, Reason: reasonNotNumber},
				{Part: "-", Position: 1, Reason: reasonNotNumber},
			},
		},
		{
			name: "hex and unicode digits", in: "0x1,١", limit: NoLimit, want: nil,
			wantParts: []PartError{
				{Part: "0x1", Position: 0, Reason: reasonNotNumber},
				{Part: "١", Position: 1, Reason: reasonNotNumber},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in, tc.limit)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q, %d) intervals mismatch (-want +got):\n%s", tc.in, tc.limit, diff)
			}
			requireCanonical(t, got)
			if tc.wantParts == nil {
				require.NoError(t, err, "Parse(%q, %d)", tc.in, tc.limit)
				return
			}
			var perr *ParseError
			require.True(t, errors.As(err, &perr), "Parse(%q, %d) error = %v, want *ParseError", tc.in, tc.limit, err)
			assert.Equal(t, tc.in, perr.Input)
			if diff := cmp.Diff(tc.wantParts, perr.Parts); diff != "" {
				t.Errorf("Parse(%q, %d) error parts mismatch (-want +got):\n%s", tc.in, tc.limit, diff)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse("1,x,5-3", NoLimit)
	require.Error(t, err)
	assert.Equal(t, `invalid index intervals "1,x,5-3": part 1 "x": not a non-negative decimal number; part 2 "5-3": range end is lower than its start`, err.Error())

	long := strings.Repeat("x,", 40) + "1"
	_, err = Parse(long, NoLimit)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `"`+long[:64]+`..."`, "input is cut in the message")
	assert.Contains(t, msg, "; and 35 more", "only five parts are listed")
	assert.Equal(t, 5, strings.Count(msg, "part "), "Error() = %q", msg)
}

func TestString(t *testing.T) {
	cases := []struct {
		name string
		in   Intervals
		want string
	}{
		{name: "nil", in: nil, want: ""},
		{name: "empty", in: Intervals{}, want: ""},
		{name: "single", in: iv(4, 4), want: "4"},
		{name: "pair written with a comma", in: iv(1, 2), want: "1,2"},
		{name: "triple written as a range", in: iv(1, 3), want: "1-3"},
		{name: "mixed", in: iv(0, 0, 2, 3, 5, 9, 11, 11), want: "0,2,3,5-9,11"},
		{name: "max", in: iv(math.MaxInt32-1, math.MaxInt32), want: "2147483646,2147483647"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.String()
			assert.Equal(t, tc.want, got, "%#v.String() = %q, want %q", tc.in, got, tc.want)
			back, err := Parse(got, NoLimit)
			require.NoError(t, err)
			if diff := cmp.Diff(normalize(slices.Clone(tc.in)), back); diff != "" {
				t.Errorf("Parse(String()) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHas(t *testing.T) {
	set := iv(1, 1, 3, 5, 9, 20)
	cases := []struct {
		name string
		set  Intervals
		x    int
		want bool
	}{
		{name: "empty", set: nil, x: 0, want: false},
		{name: "below all", set: set, x: 0, want: false},
		{name: "single", set: set, x: 1, want: true},
		{name: "gap", set: set, x: 2, want: false},
		{name: "range start", set: set, x: 3, want: true},
		{name: "range middle", set: set, x: 4, want: true},
		{name: "range end", set: set, x: 5, want: true},
		{name: "after range", set: set, x: 6, want: false},
		{name: "last end", set: set, x: 20, want: true},
		{name: "above all", set: set, x: 21, want: false},
		{name: "negative", set: set, x: -1, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.set.Has(tc.x)
			assert.Equal(t, tc.want, got, "%v.Has(%d) = %v, want %v", tc.set, tc.x, got, tc.want)
		})
	}
}

func TestCount(t *testing.T) {
	cases := []struct {
		name string
		in   Intervals
		want int
	}{
		{name: "nil", in: nil, want: 0},
		{name: "single", in: iv(7, 7), want: 1},
		{name: "several", in: iv(1, 1, 3, 5, 9, 10), want: 6},
		{name: "whole range", in: iv(0, math.MaxInt32), want: math.MaxInt32 + 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.Count()
			assert.Equal(t, tc.want, got, "%v.Count() = %d, want %d", tc.in, got, tc.want)
		})
	}
}

func TestUnion(t *testing.T) {
	cases := []struct {
		name string
		a, b Intervals
		want Intervals
	}{
		{name: "both empty", a: nil, b: nil, want: nil},
		{name: "empty non-nil is nil", a: Intervals{}, b: Intervals{}, want: nil},
		{name: "right empty", a: iv(1, 2), b: nil, want: iv(1, 2)},
		{name: "left empty", a: nil, b: iv(1, 2), want: iv(1, 2)},
		{name: "interleaved", a: iv(0, 0, 4, 4, 8, 8), b: iv(2, 2, 6, 6), want: iv(0, 0, 2, 2, 4, 4, 6, 6, 8, 8)},
		{name: "adjacent merge", a: iv(0, 1, 6, 7), b: iv(2, 3), want: iv(0, 3, 6, 7)},
		{name: "bridge", a: iv(0, 1, 5, 6), b: iv(2, 4), want: iv(0, 6)},
		{name: "overlap", a: iv(0, 5), b: iv(3, 9), want: iv(0, 9)},
		{name: "contained", a: iv(0, 9), b: iv(2, 3, 5, 6), want: iv(0, 9)},
		{name: "same start", a: iv(3, 4), b: iv(3, 8), want: iv(3, 8)},
		{name: "b spans many", a: iv(1, 1, 3, 3, 5, 5, 20, 20), b: iv(0, 10), want: iv(0, 10, 20, 20)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			aBefore, bBefore := slices.Clone(tc.a), slices.Clone(tc.b)
			got := tc.a.Union(tc.b)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v.Union(%v) mismatch (-want +got):\n%s", tc.a, tc.b, diff)
			}
			back := tc.b.Union(tc.a)
			if diff := cmp.Diff(tc.want, back); diff != "" {
				t.Errorf("%v.Union(%v) mismatch (-want +got):\n%s", tc.b, tc.a, diff)
			}
			assert.Equal(t, aBefore, tc.a, "receiver modified")
			assert.Equal(t, bBefore, tc.b, "argument modified")
			if len(got) > 0 {
				got[0].First = -100
				assert.Equal(t, aBefore, tc.a, "result shares memory with the receiver")
				assert.Equal(t, bBefore, tc.b, "result shares memory with the argument")
			}
		})
	}
}

func TestWithSorted(t *testing.T) {
	cases := []struct {
		name string
		set  Intervals
		xs   []int
		want Intervals
	}{
		{name: "nothing added", set: iv(1, 2), xs: nil, want: iv(1, 2)},
		{name: "to empty", set: nil, xs: []int{1, 2, 3, 7}, want: iv(1, 3, 7, 7)},
		{name: "duplicates", set: nil, xs: []int{4, 4, 4, 5}, want: iv(4, 5)},
		{name: "fills gaps", set: iv(0, 0, 2, 2, 4, 4), xs: []int{1, 3}, want: iv(0, 4)},
		{name: "inside", set: iv(0, 9), xs: []int{3, 5}, want: iv(0, 9)},
		{name: "negative ignored", set: iv(3, 3), xs: []int{-5, -1, 4}, want: iv(3, 4)},
		{name: "above int32 ignored", set: nil, xs: []int{1, math.MaxInt32 + 1}, want: iv(1, 1)},
		{name: "unsorted still correct", set: iv(10, 10), xs: []int{5, 3, 4, 11, 1}, want: iv(1, 1, 3, 5, 10, 11)},
		{name: "only invalid", set: nil, xs: []int{-1}, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.set)
			xsBefore := slices.Clone(tc.xs)
			got := tc.set.WithSorted(tc.xs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v.WithSorted(%v) mismatch (-want +got):\n%s", tc.set, tc.xs, diff)
			}
			requireCanonical(t, got)
			assert.Equal(t, before, tc.set, "receiver modified")
			assert.Equal(t, xsBefore, tc.xs, "argument modified")
		})
	}
}

func TestFromIndexes(t *testing.T) {
	cases := []struct {
		name string
		xs   []int
		want Intervals
	}{
		{name: "nil", xs: nil, want: nil},
		{name: "unordered with duplicates", xs: []int{5, 1, 3, 2, 5, 9}, want: iv(1, 3, 5, 5, 9, 9)},
		{name: "invalid ignored", xs: []int{-3, math.MaxInt32 + 1, math.MaxInt, 0, math.MaxInt32}, want: iv(0, 0, math.MaxInt32, math.MaxInt32)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xsBefore := slices.Clone(tc.xs)
			got := FromIndexes(tc.xs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FromIndexes(%v) mismatch (-want +got):\n%s", tc.xs, diff)
			}
			assert.Equal(t, xsBefore, tc.xs, "argument modified")
		})
	}
}

func TestIntersectionCount(t *testing.T) {
	cases := []struct {
		name string
		a, b Intervals
		want int
	}{
		{name: "empty", a: nil, b: iv(0, 5), want: 0},
		{name: "disjoint", a: iv(0, 2), b: iv(3, 5), want: 0},
		{name: "overlap", a: iv(0, 5), b: iv(3, 9), want: 3},
		{name: "contained", a: iv(0, 9), b: iv(2, 3, 5, 5), want: 3},
		{name: "interleaved", a: iv(0, 0, 2, 4, 8, 12), b: iv(1, 2, 4, 9, 12, 20), want: 5},
		{name: "equal", a: iv(1, 1, 3, 5), b: iv(1, 1, 3, 5), want: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.a.IntersectionCount(tc.b)
			assert.Equal(t, tc.want, got, "%v.IntersectionCount(%v) = %d, want %d", tc.a, tc.b, got, tc.want)
			back := tc.b.IntersectionCount(tc.a)
			assert.Equal(t, tc.want, back, "%v.IntersectionCount(%v) = %d, want %d", tc.b, tc.a, back, tc.want)
		})
	}
}

func TestTrim(t *testing.T) {
	set := iv(1, 1, 3, 5, 8, 8)
	cases := []struct {
		name  string
		limit int
		want  Intervals
	}{
		{name: "negative", limit: -1, want: nil},
		{name: "zero", limit: 0, want: nil},
		{name: "below all", limit: 1, want: nil},
		{name: "after single", limit: 2, want: iv(1, 1)},
		{name: "cuts a range", limit: 4, want: iv(1, 1, 3, 3)},
		{name: "at range end", limit: 6, want: iv(1, 1, 3, 5)},
		{name: "keeps all", limit: 9, want: iv(1, 1, 3, 5, 8, 8)},
		{name: "far above", limit: math.MaxInt, want: iv(1, 1, 3, 5, 8, 8)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := set.Trim(tc.limit)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%v.Trim(%d) mismatch (-want +got):\n%s", set, tc.limit, diff)
			}
			assert.Equal(t, iv(1, 1, 3, 5, 8, 8), set, "receiver modified")
		})
	}
}

func TestAll(t *testing.T) {
	set := iv(1, 1, 3, 5, 8, 8)
	assert.Equal(t, []int{1, 3, 4, 5, 8}, slices.Collect(set.All()))
	assert.Empty(t, slices.Collect(Intervals(nil).All()))

	var first []int
	for x := range set.All() {
		if x > 3 {
			break
		}
		first = append(first, x)
	}
	assert.Equal(t, []int{1, 3}, first, "All() stops when the loop breaks")
}

func TestIntervalCount(t *testing.T) {
	assert.Equal(t, 1, Interval{First: 4, Last: 4}.Count())
	assert.Equal(t, 3, Interval{First: 4, Last: 6}.Count())
}

func TestParseErrorClasses(t *testing.T) {
	cases := []struct {
		name                              string
		in                                string
		limit                             int
		wantRange, wantUnordered, wantBad bool
	}{
		{name: "valid", in: "1,3-5", limit: 10},
		{name: "out of range only", in: "1,8-12", limit: 10, wantRange: true},
		{name: "wholly out of range", in: "1,12", limit: 10, wantRange: true},
		{name: "unordered only", in: "5,1", limit: 10, wantUnordered: true},
		{name: "syntax only", in: "1,x", limit: 10, wantBad: true},
		{name: "all three", in: "4,x,2,11", limit: 10, wantRange: true, wantUnordered: true, wantBad: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in, tc.limit)
			assert.Equal(t, tc.wantRange, errors.Is(err, ErrOutOfRange), "errors.Is(ErrOutOfRange) of %v", err)
			assert.Equal(t, tc.wantUnordered, errors.Is(err, ErrUnordered), "errors.Is(ErrUnordered) of %v", err)
			assert.Equal(t, tc.wantBad, errors.Is(err, ErrSyntax), "errors.Is(ErrSyntax) of %v", err)
		})
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		name          string
		in            []Interval
		want          Intervals
		wantCanonical bool
	}{
		{name: "nil", in: nil, want: nil, wantCanonical: true},
		{name: "empty non-nil", in: []Interval{}, want: nil, wantCanonical: true},
		{name: "canonical", in: iv(1, 1, 3, 5), want: iv(1, 1, 3, 5), wantCanonical: true},
		{name: "unsorted", in: iv(7, 9, 1, 2), want: iv(1, 2, 7, 9)},
		{name: "adjacent", in: iv(1, 2, 3, 4), want: iv(1, 4)},
		{name: "overlapping", in: iv(1, 5, 3, 4, 5, 8), want: iv(1, 8)},
		{name: "reversed interval is empty", in: iv(5, 3, 8, 8), want: iv(8, 8)},
		{name: "negative cut off", in: iv(-4, 2), want: iv(0, 2)},
		{name: "wholly negative dropped", in: iv(-4, -2), want: nil},
		{name: "above MaxInt32 cut off", in: iv(math.MaxInt32-1, math.MaxInt32+5), want: iv(math.MaxInt32-1, math.MaxInt32)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.in)
			assert.Equal(t, tc.wantCanonical, Intervals(tc.in).Canonical(), "Canonical(%v)", tc.in)
			got := Normalize(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Normalize(%v) mismatch (-want +got):\n%s", tc.in, diff)
			}
			assert.True(t, got.Canonical(), "Normalize(%v) = %v is not canonical", tc.in, got)
			assert.Equal(t, before, tc.in, "Normalize modified its argument")
			if len(got) > 0 && len(tc.in) > 0 {
				assert.NotSame(t, &got[0], &tc.in[0], "Normalize shares memory with its argument")
			}
		})
	}
}
