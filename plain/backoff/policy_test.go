package backoff

import (
	"math"
	"math/big"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestPolicyDelay(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	cases := []struct {
		name   string
		policy Policy
		n      int
		want   time.Duration
	}{
		{name: "zero policy, no failure", n: 0, want: 0},
		{name: "negative n", n: -3, want: 0},
		{name: "zero policy n=1 is DefaultBase", n: 1, want: DefaultBase},
		{name: "zero policy n=4", n: 4, want: 80 * time.Second},
		{name: "zero policy n=6 last below cap", n: 6, want: 320 * time.Second},
		{name: "zero policy capped at DefaultMax", n: 7, want: DefaultMax},
		{name: "huge n", n: math.MaxInt, want: DefaultMax},
		{name: "negative fields take defaults", policy: Policy{Base: -1, Max: -1}, n: 2, want: 20 * time.Second},
		{name: "custom base, default max", policy: Policy{Base: time.Second}, n: 3, want: 4 * time.Second},
		{name: "custom max, default base", policy: Policy{Max: 15 * time.Second}, n: 2, want: 15 * time.Second},
		{name: "base above max", policy: Policy{Base: time.Minute, Max: 30 * time.Second}, n: 1, want: 30 * time.Second},
		{name: "2^62 fits", policy: Policy{Base: 1, Max: maxDur}, n: 63, want: 1 << 62},
		{name: "2^63 overflows to max", policy: Policy{Base: 1, Max: maxDur}, n: 64, want: maxDur},
		{name: "3*2^62 overflows to max", policy: Policy{Base: 3, Max: maxDur}, n: 63, want: maxDur},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Delay(tc.n); got != tc.want {
				t.Errorf("%+v.Delay(%d) = %v, want %v", tc.policy, tc.n, got, tc.want)
			}
		})
	}
}

func TestPolicyRemaining(t *testing.T) {
	var p Policy // defaults: 10s doubling to 10m
	cases := []struct {
		name        string
		n           int
		lastFailure time.Time
		now         time.Time
		want        time.Duration
	}{
		{name: "zero n: no failure, no wait", n: 0, lastFailure: t0, now: t0, want: 0},
		{name: "first failure, none elapsed", n: 1, lastFailure: t0, now: t0, want: 10 * time.Second},
		{name: "second failure, 2.5s elapsed", n: 2, lastFailure: t0, now: at(2500 * time.Millisecond), want: 17500 * time.Millisecond},
		{name: "delay just over", n: 2, lastFailure: t0, now: at(20 * time.Second), want: 0},
		{name: "one nanosecond left", n: 2, lastFailure: t0, now: at(20*time.Second - 1), want: 1},
		{name: "capped, a minute elapsed", n: 30, lastFailure: t0, now: at(time.Minute), want: 9 * time.Minute},
		{name: "finish time ahead of now waits the full delay", n: 2, lastFailure: at(time.Hour), now: t0, want: 20 * time.Second},
		{name: "zero finish time: long ago", n: 5, now: t0, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Remaining(tc.n, tc.lastFailure, tc.now); got != tc.want {
				t.Errorf("Remaining(%d, %v, %v) = %v, want %v", tc.n, tc.lastFailure, tc.now, got, tc.want)
			}
		})
	}
}

func TestIndexRemaining(t *testing.T) {
	cases := []struct {
		name            string
		failed, ignored int32
		now             time.Time
		wantN           int
		want            time.Duration
	}{
		{name: "first failure of the index", now: t0, wantN: 1, want: 10 * time.Second},
		{name: "counted and ignored both count", failed: 1, ignored: 2, now: at(5 * time.Second), wantN: 4, want: 75 * time.Second},
		{name: "negative counts count 0", failed: -5, ignored: -1, now: t0, wantN: 1, want: 10 * time.Second},
		{name: "no int32 overflow", failed: math.MaxInt32, ignored: math.MaxInt32, now: t0, wantN: 2*math.MaxInt32 + 1, want: DefaultMax},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if n := indexFailures(tc.failed, tc.ignored); n != tc.wantN {
				t.Errorf("indexFailures(%d, %d) = %d, want %d", tc.failed, tc.ignored, n, tc.wantN)
			}
			if got := (Policy{}).IndexRemaining(tc.failed, tc.ignored, t0, tc.now); got != tc.want {
				t.Errorf("IndexRemaining(%d, %d) = %v, want %v", tc.failed, tc.ignored, got, tc.want)
			}
		})
	}
}

func TestPolicyDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = (Policy{}).Remaining(7, t0, at(time.Second)) }); n != 0 {
		t.Errorf("Remaining allocates %v times, want 0", n)
	}
}

// FuzzPolicyDelay checks Delay against exact big-integer arithmetic:
// min(base·2^(n-1), max) with the defaults for non-positive fields.
func FuzzPolicyDelay(f *testing.F) {
	f.Add(int64(1), int64(0), int64(0))
	f.Add(int64(7), int64(10*time.Second), int64(10*time.Minute))
	f.Add(int64(63), int64(3), int64(math.MaxInt64))
	f.Add(int64(1), int64(time.Minute), int64(time.Second))
	f.Add(int64(math.MaxInt64), int64(-1), int64(1))
	f.Fuzz(func(t *testing.T, n64, base64, max64 int64) {
		p := Policy{Base: time.Duration(base64), Max: time.Duration(max64)}
		n := int(n64)
		base, max := p.base(), p.max()
		want := time.Duration(0)
		if n > 0 {
			v := new(big.Int).Lsh(big.NewInt(int64(base)), uint(min(n-1, 200)))
			want = max
			if v.Cmp(big.NewInt(int64(max))) < 0 {
				want = time.Duration(v.Int64())
			}
		}
		if got := p.Delay(n); got != want {
			t.Fatalf("%+v.Delay(%d) = %d, want %d", p, n, got, want)
		}
	})
}

func BenchmarkPolicyRemaining(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run("n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			var sink time.Duration
			for b.Loop() {
				sink += (Policy{}).Remaining(n, t0, at(time.Second))
			}
			_ = sink
		})
	}
}
