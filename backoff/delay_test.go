package backoff_test

import (
	"math"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/backoff"
)

func TestDelay(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	tests := []struct {
		name      string
		n         int
		base, max time.Duration
		want      time.Duration
	}{
		{name: "n=0", n: 0, base: 10 * time.Second, max: 10 * time.Minute, want: 0},
		{name: "negative n", n: -3, base: 10 * time.Second, max: 10 * time.Minute, want: 0},
		{name: "most negative n", n: math.MinInt, base: 10 * time.Second, max: 10 * time.Minute, want: 0},
		{name: "n=1", n: 1, base: 10 * time.Second, max: 10 * time.Minute, want: 10 * time.Second},
		{name: "n=2", n: 2, base: 10 * time.Second, max: 10 * time.Minute, want: 20 * time.Second},
		{name: "n=3", n: 3, base: 10 * time.Second, max: 10 * time.Minute, want: 40 * time.Second},
		{name: "n=6 last below cap", n: 6, base: 10 * time.Second, max: 10 * time.Minute, want: 320 * time.Second},
		{name: "n=7 capped", n: 7, base: 10 * time.Second, max: 10 * time.Minute, want: 10 * time.Minute},
		{name: "cap reached exactly", n: 3, base: 10 * time.Second, max: 40 * time.Second, want: 40 * time.Second},
		{name: "past exact cap", n: 4, base: 10 * time.Second, max: 40 * time.Second, want: 40 * time.Second},
		{name: "n=100", n: 100, base: 10 * time.Second, max: 10 * time.Minute, want: 10 * time.Minute},
		{name: "huge n 1<<40", n: 1 << 40, base: 10 * time.Second, max: 10 * time.Minute, want: 10 * time.Minute},
		{name: "max int n", n: math.MaxInt, base: time.Nanosecond, max: maxDur, want: maxDur},
		{name: "2^61 fits", n: 62, base: 1, max: maxDur, want: 1 << 61},
		{name: "2^62 fits", n: 63, base: 1, max: maxDur, want: 1 << 62},
		{name: "2^63 overflows to max", n: 64, base: 1, max: maxDur, want: maxDur},
		{name: "3*2^61 fits", n: 62, base: 3, max: maxDur, want: 3 << 61},
		{name: "3*2^62 overflows to max", n: 63, base: 3, max: maxDur, want: maxDur},
		{name: "one below 2^62 cap", n: 63, base: 1, max: 1<<62 - 1, want: 1<<62 - 1},
		{name: "custom 5s/700s n=8", n: 8, base: 5 * time.Second, max: 700 * time.Second, want: 640 * time.Second},
		{name: "custom 5s/700s n=9", n: 9, base: 5 * time.Second, max: 700 * time.Second, want: 700 * time.Second},
		{name: "custom 1ms/1s n=4", n: 4, base: time.Millisecond, max: time.Second, want: 8 * time.Millisecond},
		{name: "base above max n=1", n: 1, base: time.Minute, max: 30 * time.Second, want: 30 * time.Second},
		{name: "base equals max", n: 1, base: time.Minute, max: time.Minute, want: time.Minute},
		{name: "zero base", n: 3, base: 0, max: time.Minute, want: 0},
		{name: "negative base", n: 3, base: -time.Second, max: time.Minute, want: 0},
		{name: "zero max", n: 3, base: time.Second, max: 0, want: 0},
		{name: "negative max", n: 3, base: time.Second, max: -time.Minute, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := backoff.Delay(tc.n, tc.base, tc.max)
			assert.Equal(t, tc.want, got, "Delay(%d, %v, %v) = %v, want %v", tc.n, tc.base, tc.max, got, tc.want)
		})
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name   string
		policy backoff.Policy
		n      int
		want   time.Duration
	}{
		{name: "zero policy n=1 is DefaultBase", n: 1, want: backoff.DefaultBase},
		{name: "zero policy n=4", n: 4, want: 80 * time.Second},
		{name: "zero policy capped at DefaultMax", n: 20, want: backoff.DefaultMax},
		{name: "negative fields take defaults", policy: backoff.Policy{Base: -1, Max: -1}, n: 2, want: 20 * time.Second},
		{name: "custom base, default max", policy: backoff.Policy{Base: time.Second}, n: 3, want: 4 * time.Second},
		{name: "custom max, default base", policy: backoff.Policy{Max: 15 * time.Second}, n: 2, want: 15 * time.Second},
		{name: "custom both", policy: backoff.Policy{Base: time.Second, Max: 5 * time.Second}, n: 3, want: 4 * time.Second},
		{name: "n=0", n: 0, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.policy.Delay(tc.n)
			assert.Equal(t, tc.want, got, "%+v.Delay(%d) = %v, want %v", tc.policy, tc.n, got, tc.want)
		})
	}
	assert.Equal(t, 10*time.Second, backoff.DefaultBase)
	assert.Equal(t, 10*time.Minute, backoff.DefaultMax)
}

func TestRemaining(t *testing.T) {
	const base, max = 5 * time.Second, 700 * time.Second
	tests := []struct {
		name        string
		n           int
		lastFailure time.Time
		now         time.Time
		want        time.Duration
	}{
		{name: "no failures", n: 0, lastFailure: t0, now: t0, want: 0},
		{name: "failure just now", n: 1, lastFailure: t0, now: t0, want: 5 * time.Second},
		{name: "one second elapsed", n: 1, lastFailure: t0, now: at(time.Second), want: 4 * time.Second},
		{name: "sub-second elapsed", n: 1, lastFailure: t0, now: at(1500 * time.Millisecond), want: 3500 * time.Millisecond},
		{name: "exactly elapsed", n: 1, lastFailure: t0, now: at(5 * time.Second), want: 0},
		{name: "one nanosecond before elapsed", n: 1, lastFailure: t0, now: at(5*time.Second - 1), want: 1},
		{name: "long past", n: 1, lastFailure: t0, now: at(time.Hour), want: 0},
		{name: "three failures", n: 3, lastFailure: t0, now: t0, want: 20 * time.Second},
		{name: "capped", n: 9, lastFailure: t0, now: t0, want: 700 * time.Second},
		{name: "capped, partly elapsed", n: 9, lastFailure: t0, now: at(100 * time.Second), want: 600 * time.Second},
		{name: "last failure in the future is capped at the delay", n: 3, lastFailure: at(time.Minute), now: t0, want: 20 * time.Second},
		{name: "zero last failure counts as long ago", n: 3, lastFailure: time.Time{}, now: t0, want: 0},
		{name: "far-future last failure does not overflow", n: 3, lastFailure: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), now: t0, want: 20 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := backoff.Remaining(tc.n, base, max, tc.lastFailure, tc.now)
			assert.Equal(t, tc.want, got, "Remaining(%d, %v, %v, %v, %v) = %v, want %v", tc.n, base, max, tc.lastFailure, tc.now, got, tc.want)
			gotPolicy := backoff.Policy{Base: base, Max: max}.Remaining(tc.n, tc.lastFailure, tc.now)
			assert.Equal(t, tc.want, gotPolicy, "Policy.Remaining = %v, want %v", gotPolicy, tc.want)
		})
	}
}

func TestDelayDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		_ = backoff.Remaining(7, backoff.DefaultBase, backoff.DefaultMax, t0, at(time.Second))
	})
	assert.Zero(t, allocs)
}

// wantDelay computes min(base·2^(n-1), max) with exact big-integer arithmetic.
func wantDelay(n int, base, max time.Duration) time.Duration {
	if n <= 0 || base <= 0 || max <= 0 {
		return 0
	}
	shift := uint(min(n-1, 200)) // base >= 1 and 2^200 > any Duration
	v := new(big.Int).Lsh(big.NewInt(int64(base)), shift)
	if v.Cmp(big.NewInt(int64(max))) >= 0 {
		return max
	}
	return time.Duration(v.Int64())
}

func FuzzDelay(f *testing.F) {
	f.Add(int64(1), int64(10*time.Second), int64(10*time.Minute))
	f.Add(int64(7), int64(10*time.Second), int64(10*time.Minute))
	f.Add(int64(1<<40), int64(10*time.Second), int64(10*time.Minute))
	f.Add(int64(63), int64(1), int64(math.MaxInt64))
	f.Add(int64(63), int64(3), int64(math.MaxInt64))
	f.Add(int64(1), int64(time.Minute), int64(time.Second))
	f.Add(int64(0), int64(-1), int64(-1))
	f.Add(int64(math.MaxInt64), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, n64, base64, max64 int64) {
		n, base, max := int(n64), time.Duration(base64), time.Duration(max64)
		got := backoff.Delay(n, base, max)
		if got < 0 {
			t.Fatalf("Delay(%d, %d, %d) = %d, want >= 0", n, base, max, got)
		}
		if (max > 0 && got > max) || (max <= 0 && got != 0) {
			t.Fatalf("Delay(%d, %d, %d) = %d, want <= max(max, 0)", n, base, max, got)
		}
		if want := wantDelay(n, base, max); got != want {
			t.Fatalf("Delay(%d, %d, %d) = %d, want %d", n, base, max, got, want)
		}
		if n < math.MaxInt {
			if next := backoff.Delay(n+1, base, max); next < got {
				t.Fatalf("Delay(%d) = %d < Delay(%d) = %d, want monotonic in n", n+1, next, n, got)
			}
		}
	})
}

func BenchmarkDelay(b *testing.B) {
	for _, n := range []int{1, 7, 1 << 40} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var sink time.Duration
			for b.Loop() {
				sink += backoff.Delay(n, backoff.DefaultBase, backoff.DefaultMax)
			}
			_ = sink
		})
	}
}
