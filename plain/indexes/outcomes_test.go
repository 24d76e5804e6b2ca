package indexes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
)

func TestOutcomesRecord(t *testing.T) {
	cases := []struct {
		name              string
		prev              Outcomes
		completions       int
		succeeded, failed []int
		want              Outcomes
	}{
		{name: "nothing", completions: 5, want: Outcomes{}},
		{
			name: "new outcomes added", completions: 10,
			prev:      Outcomes{Succeeded: iv(0, 1), Failed: iv(5, 5)},
			succeeded: []int{3, 2, 2}, failed: []int{7},
			want: Outcomes{Succeeded: iv(0, 3), Failed: iv(5, 5, 7, 7)},
		},
		{
			name: "a failed index stays failed when a pod of it succeeds", completions: 5,
			prev: Outcomes{Failed: iv(2, 2)}, succeeded: []int{2, 3},
			want: Outcomes{Succeeded: iv(3, 3), Failed: iv(2, 2)},
		},
		{
			name: "a succeeded index stays succeeded when a pod of it fails", completions: 5,
			prev: Outcomes{Succeeded: iv(1, 1)}, failed: []int{1, 4},
			want: Outcomes{Succeeded: iv(1, 1), Failed: iv(4, 4)},
		},
		{
			name: "seen together, the success wins", completions: 5,
			succeeded: []int{3}, failed: []int{3},
			want: Outcomes{Succeeded: iv(3, 3)},
		},
		{
			name: "out of range and negative indexes ignored", completions: 5,
			succeeded: []int{-1, 5, 9, 0}, failed: []int{6, -3},
			want: Outcomes{Succeeded: iv(0, 0)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prevS, prevF := clone(tc.prev.Succeeded), clone(tc.prev.Failed)
			got := tc.prev.Record(tc.completions, tc.succeeded, tc.failed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Record(%d, %v, %v) mismatch (-want +got):\n%s", tc.completions, tc.succeeded, tc.failed, diff)
			}
			assert.Equal(t, prevS, tc.prev.Succeeded, "Record modified the receiver")
			assert.Equal(t, prevF, tc.prev.Failed, "Record modified the receiver")
			assert.Zero(t, got.Succeeded.IntersectionCount(got.Failed), "an index both succeeded and failed")
			if len(got.Failed) > 0 && len(tc.prev.Failed) > 0 {
				assert.NotSame(t, &got.Failed[0], &tc.prev.Failed[0], "result shares memory with the receiver")
			}
		})
	}
}
