package indexes

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
)

// firstPendingSlow is the obvious definition, for comparison.
func firstPendingSlow(completions, n int, skip func(int) bool, exclude ...Intervals) []int {
	var out []int
	for x := 0; x < completions && len(out) < n; x++ {
		excluded := false
		for _, ivs := range exclude {
			excluded = excluded || ivs.Has(x)
		}
		if !excluded && (skip == nil || !skip(x)) {
			out = append(out, x)
		}
	}
	return out
}

func TestFirstPending(t *testing.T) {
	cases := []struct {
		name        string
		completions int
		n           int
		exclude     []Intervals
		want        []int
	}{
		{name: "no completions", completions: 0, n: 3, want: nil},
		{name: "negative completions", completions: -1, n: 3, want: nil},
		{name: "none requested", completions: 5, n: 0, want: nil},
		{name: "negative request", completions: 5, n: -2, want: nil},
		{name: "nothing excluded", completions: 5, n: 3, want: []int{0, 1, 2}},
		{name: "more requested than exist", completions: 3, n: 10, want: []int{0, 1, 2}},
		{
			name: "succeeded, failed and active", completions: 10, n: 3,
			exclude: []Intervals{iv(0, 2), iv(4, 4), iv(3, 3, 7, 7)},
			want:    []int{5, 6, 8},
		},
		{
			name: "overlapping sets", completions: 10, n: 10,
			exclude: []Intervals{iv(1, 5), iv(3, 7), iv(0, 0, 6, 8)},
			want:    []int{9},
		},
		{
			name: "empty sets", completions: 4, n: 2,
			exclude: []Intervals{nil, {}, nil},
			want:    []int{0, 1},
		},
		{
			name: "everything excluded", completions: 6, n: 2,
			exclude: []Intervals{iv(0, 2), iv(3, 5)},
			want:    nil,
		},
		{
			name: "exclusions beyond completions", completions: 5, n: 5,
			exclude: []Intervals{iv(1, 1, 4, 100)},
			want:    []int{0, 2, 3},
		},
		{
			name: "gaps between adjacent sets", completions: 8, n: 8,
			exclude: []Intervals{iv(0, 1, 4, 5), iv(2, 3, 6, 6)},
			want:    []int{7},
		},
		{
			name: "large range jumped", completions: 100000, n: 3,
			exclude: []Intervals{iv(0, 99990)},
			want:    []int{99991, 99992, 99993},
		},
		{
			name: "more than eight sets", completions: 12, n: 12,
			exclude: []Intervals{iv(0, 0), iv(1, 1), iv(2, 2), iv(3, 3), iv(4, 4), iv(5, 5), iv(6, 6), iv(7, 7), iv(8, 8), iv(10, 10)},
			want:    []int{9, 11},
		},
		{
			name: "near max int32", completions: 1<<31 - 1, n: 2,
			exclude: []Intervals{iv(0, 1<<31-4)},
			want:    []int{1<<31 - 3, 1<<31 - 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FirstPending(tc.completions, tc.n, tc.exclude...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FirstPending(%d, %d, %v) mismatch (-want +got):\n%s", tc.completions, tc.n, tc.exclude, diff)
			}
		})
	}
}

func TestFirstPendingFunc(t *testing.T) {
	var asked []int
	skipEven := func(x int) bool {
		asked = append(asked, x)
		return x%2 == 0
	}
	got := FirstPendingFunc(20, 3, skipEven, iv(0, 3, 9, 12))
	assert.Equal(t, []int{5, 7, 13}, got)
	assert.Equal(t, []int{4, 5, 6, 7, 8, 13}, asked, "skip is called once per candidate, in order, never for excluded indexes")

	assert.Nil(t, FirstPendingFunc(5, 3, func(int) bool { return true }), "all skipped")
	assert.Equal(t, []int{0, 1}, FirstPendingFunc(5, 2, nil), "nil skip")
}

// TestFirstPendingJumps checks that the cost does not depend on the size of the excluded
// ranges: only indexes outside them are ever looked at.
func TestFirstPendingJumps(t *testing.T) {
	calls := 0
	got := FirstPendingFunc(1<<30, 2, func(int) bool { calls++; return false }, iv(0, 1<<29), iv(1<<29+1, 1<<30-3))
	assert.Equal(t, []int{1<<30 - 2, 1<<30 - 1}, got)
	assert.Equal(t, 2, calls)
}

func TestFirstPendingMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	randomSet := func(limit int) Intervals {
		xs := make([]int, r.IntN(limit))
		for i := range xs {
			xs[i] = r.IntN(limit + 5)
		}
		return FromIndexes(xs)
	}
	for range 500 {
		completions := r.IntN(40)
		n := r.IntN(45) - 2
		exclude := make([]Intervals, r.IntN(11))
		for i := range exclude {
			exclude[i] = randomSet(40)
		}
		mod := r.IntN(4) + 2
		skip := func(x int) bool { return x%mod == 0 }
		if r.IntN(2) == 0 {
			skip = nil
		}
		want := firstPendingSlow(completions, n, skip, exclude...)
		got := FirstPendingFunc(completions, n, skip, exclude...)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("FirstPendingFunc(%d, %d, skip, %v) mismatch (-want +got):\n%s", completions, n, exclude, diff)
		}
	}
}

func TestFirstPendingAllocatesOnlyTheResult(t *testing.T) {
	exclude := []Intervals{iv(0, 10, 20, 30), iv(11, 15), iv(40, 50)}
	allocs := testing.AllocsPerRun(100, func() { _ = FirstPending(100, 5, exclude...) })
	assert.Equal(t, 1.0, allocs)
}
