package indexes

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNextFailureCount(t *testing.T) {
	cases := []struct {
		name    string
		prev    FailureCount
		ignored bool
		want    FailureCount
	}{
		{name: "first counted failure", prev: FailureCount{}, ignored: false, want: FailureCount{Failed: 1}},
		{name: "first ignored failure", prev: FailureCount{}, ignored: true, want: FailureCount{Ignored: 1}},
		{name: "counted adds to failed", prev: FailureCount{Failed: 2, Ignored: 5}, ignored: false, want: FailureCount{Failed: 3, Ignored: 5}},
		{name: "ignored adds to ignored", prev: FailureCount{Failed: 2, Ignored: 5}, ignored: true, want: FailureCount{Failed: 2, Ignored: 6}},
		{name: "saturates", prev: FailureCount{Failed: math.MaxInt32, Ignored: math.MaxInt32}, ignored: false, want: FailureCount{Failed: math.MaxInt32, Ignored: math.MaxInt32}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NextFailureCount(tc.prev, tc.ignored)
			assert.Equal(t, tc.want, got, "NextFailureCount(%+v, %v) = %+v, want %+v", tc.prev, tc.ignored, got, tc.want)
		})
	}
}

func TestFailureCountHelpers(t *testing.T) {
	assert.Equal(t, 5, FailureCount{Failed: 2, Ignored: 3}.Total())
	assert.Equal(t, 2*math.MaxInt32, FailureCount{Failed: math.MaxInt32, Ignored: math.MaxInt32}.Total(), "no int32 overflow")
	assert.Equal(t, 3, FailureCount{Failed: -4, Ignored: 3}.Total(), "a negative count counts 0")

	cases := []struct {
		failed int32
		limit  int32
		want   bool
	}{
		{failed: 0, limit: 0, want: true},
		{failed: 0, limit: 1, want: false},
		{failed: 1, limit: 1, want: true},
		{failed: 2, limit: 1, want: true},
		{failed: 2, limit: 3, want: false},
	}
	for _, tc := range cases {
		got := FailureCount{Failed: tc.failed, Ignored: 10}.Exhausts(tc.limit)
		assert.Equal(t, tc.want, got, "FailureCount{Failed: %d}.Exhausts(%d) = %v, want %v", tc.failed, tc.limit, got, tc.want)
	}
}

func TestIndexFailed(t *testing.T) {
	cases := []struct {
		name string
		in   IndexFailure
		want bool
	}{
		{name: "zero value: counted failure under limit 0", in: IndexFailure{}, want: true},
		{name: "counted failures below the limit", in: IndexFailure{Count: FailureCount{Failed: 1}, BackoffLimitPerIndex: 2}, want: false},
		{name: "counted failures reach the limit", in: IndexFailure{Count: FailureCount{Failed: 2}, BackoffLimitPerIndex: 2}, want: true},
		{name: "ignored failures do not count towards the limit", in: IndexFailure{Count: FailureCount{Ignored: 5}, BackoffLimitPerIndex: 2}, want: false},
		{name: "an ignored failure never fails the index", in: IndexFailure{Ignored: true, Count: FailureCount{Failed: 9}, BackoffLimitPerIndex: 2}, want: false},
		{name: "FailIndex fails the index below the limit", in: IndexFailure{FailIndex: true, BackoffLimitPerIndex: 6}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := IndexFailed(tc.in)
			assert.Equal(t, tc.want, got, "IndexFailed(%+v) = %v, want %v", tc.in, got, tc.want)
		})
	}
}
