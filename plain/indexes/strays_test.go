package indexes

import (
	"cmp"
	"math/rand/v2"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestStrays(t *testing.T) {
	// Pods of one index: the one with the higher position is removed first, so the
	// lowest position is kept.
	byPosDesc := func(i, j int) int { return cmp.Compare(j, i) }
	cases := []struct {
		name        string
		index       []int
		completions int
		want        StraysResult
	}{
		{name: "no pods", completions: 3, want: StraysResult{}},
		{
			name: "one pod per index", index: []int{2, 0, 1}, completions: 3,
			want: StraysResult{Kept: []int{1, 2, 0}, Active: iv(0, 2)},
		},
		{
			name: "no index, out of range and duplicates", index: []int{-1, 1, 4, 1, Unknown, 1, 3}, completions: 4,
			want: StraysResult{
				Remove: []Stray{
					{Pos: 4, Index: Unknown, Reason: StrayNoIndex},
					{Pos: 0, Index: Unknown, Reason: StrayNoIndex},
					{Pos: 5, Index: 1, Reason: StrayDuplicate},
					{Pos: 3, Index: 1, Reason: StrayDuplicate},
					{Pos: 2, Index: 4, Reason: StrayOutOfRange},
				},
				Kept:   []int{1, 6},
				Active: iv(1, 1, 3, 3),
			},
		},
		{
			name: "completions zero: every index out of range", index: []int{0}, completions: 0,
			want: StraysResult{Remove: []Stray{{Pos: 0, Index: 0, Reason: StrayOutOfRange}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Strays(tc.index, tc.completions, byPosDesc)
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Strays(%v, %d) mismatch (-want +got):\n%s", tc.index, tc.completions, diff)
			}
		})
	}
}

// TestStraysKeepsOnePodPerIndex checks on random input that every pod is either kept
// or removed, exactly one pod is kept per index in range, and the kept pod of an index
// is the last in removal order.
func TestStraysKeepsOnePodPerIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := r.IntN(40)
		index := make([]int, n)
		rank := make([]int, n) // removal order: lower rank first
		for i := range index {
			index[i] = r.IntN(12) - 1
			rank[i] = r.IntN(1000)*n + i
		}
		completions := r.IntN(10)
		res := Strays(index, completions, func(i, j int) int { return cmp.Compare(rank[i], rank[j]) })
		seen := make(map[int]bool, n)
		best := map[int]int{}
		for i, ix := range index {
			if ix >= 0 && ix < completions && (best[ix] == 0 || rank[i] > rank[best[ix]-1]) {
				best[ix] = i + 1
			}
		}
		for _, s := range res.Remove {
			seen[s.Pos] = true
		}
		for _, k := range res.Kept {
			if seen[k] {
				t.Fatalf("Strays(%v, %d): pod %d both kept and removed", index, completions, k)
			}
			seen[k] = true
			if best[index[k]]-1 != k {
				t.Fatalf("Strays(%v, %d): kept pod %d of index %d, want pod %d", index, completions, k, index[k], best[index[k]]-1)
			}
		}
		if len(seen) != n || len(res.Kept) != len(best) || res.Active.Count() != len(best) {
			t.Fatalf("Strays(%v, %d) = %+v: %d pods accounted for, %d kept, want %d and %d", index, completions, res, len(seen), len(res.Kept), n, len(best))
		}
	}
}
