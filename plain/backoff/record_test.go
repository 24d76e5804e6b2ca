package backoff

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestAdvance(t *testing.T) {
	cases := []struct {
		name              string
		start             Record
		succeeded, failed []time.Time
		want              Record
	}{
		{name: "nothing new on an empty record", want: Record{}},
		{name: "nothing new keeps the record", start: Record{Failures: 2, LastFailure: t0}, want: Record{Failures: 2, LastFailure: t0}},
		{name: "failures in any order: the latest is the last failure", failed: []time.Time{t0, at(-time.Millisecond)}, want: Record{Failures: 2, LastFailure: t0}},
		{name: "failures add to the stored count", start: Record{Failures: 2, LastFailure: at(-time.Minute)}, failed: []time.Time{t0}, want: Record{Failures: 3, LastFailure: t0}},
		{name: "an older new failure keeps the later stored last failure", start: Record{Failures: 2, LastFailure: t0}, failed: []time.Time{at(-time.Minute)}, want: Record{Failures: 3, LastFailure: t0}},
		{name: "count saturates", start: Record{Failures: math.MaxInt32 - 1, LastFailure: t0}, failed: []time.Time{at(1), at(2), at(3)}, want: Record{Failures: math.MaxInt32, LastFailure: at(3)}},
		{name: "a success resets", start: Record{Failures: 5, LastFailure: at(-time.Minute)}, succeeded: []time.Time{t0}, failed: []time.Time{at(-time.Second)}, want: Record{}},
		{name: "failures after the latest success count", succeeded: []time.Time{at(-time.Hour), t0}, failed: []time.Time{at(-time.Minute), at(time.Second), at(2 * time.Second)}, want: Record{Failures: 2, LastFailure: at(2 * time.Second)}},
		{name: "a tie goes to the success", succeeded: []time.Time{t0}, failed: []time.Time{t0}, want: Record{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			succ, fail := slices.Clone(tc.succeeded), slices.Clone(tc.failed)
			got := tc.start.Advance(tc.succeeded, tc.failed)
			if got != tc.want {
				t.Errorf("%+v.Advance(%v, %v) = %+v, want %+v", tc.start, tc.succeeded, tc.failed, got, tc.want)
			}
			if !slices.Equal(succ, tc.succeeded) || !slices.Equal(fail, tc.failed) {
				t.Errorf("Advance modified its arguments")
			}
		})
	}
}

func TestRecordRemaining(t *testing.T) {
	cases := []struct {
		name string
		rec  Record
		now  time.Time
		want time.Duration
	}{
		{name: "zero record", rec: Record{}, now: t0, want: 0},
		{name: "three failures just now", rec: Record{Failures: 3, LastFailure: t0}, now: t0, want: 40 * time.Second},
		{name: "partly elapsed", rec: Record{Failures: 1, LastFailure: t0}, now: at(4 * time.Second), want: 6 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rec.Remaining(Policy{}, tc.now); got != tc.want {
				t.Errorf("%+v.Remaining = %v, want %v", tc.rec, got, tc.want)
			}
			if tc.rec.IsZero() != (tc.rec == Record{}) {
				t.Errorf("%+v.IsZero() = %v", tc.rec, tc.rec.IsZero())
			}
		})
	}
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name string
		a, b Record
		want Record
	}{
		{name: "both zero", want: Record{}},
		{name: "later last failure wins", a: Record{Failures: 9, LastFailure: t0}, b: Record{Failures: 1, LastFailure: at(time.Second)}, want: Record{Failures: 1, LastFailure: at(time.Second)}},
		{name: "same time: more failures win", a: Record{Failures: 2, LastFailure: t0}, b: Record{Failures: 4, LastFailure: t0}, want: Record{Failures: 4, LastFailure: t0}},
		{name: "zero and non-zero", a: Record{}, b: Record{Failures: 1, LastFailure: t0}, want: Record{Failures: 1, LastFailure: t0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Merge(tc.a, tc.b); got != tc.want {
				t.Errorf("Merge(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
			}
			if got := Merge(tc.b, tc.a); got != tc.want {
				t.Errorf("Merge(%+v, %+v) = %+v, want %+v (commutative)", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

func TestAdvanceDoesNotAllocate(t *testing.T) {
	succ, fail := []time.Time{t0}, []time.Time{at(time.Second), at(2 * time.Second)}
	if n := testing.AllocsPerRun(100, func() { _ = (Record{}).Advance(succ, fail) }); n != 0 {
		t.Errorf("Advance allocates %v times, want 0", n)
	}
}

func BenchmarkAdvance(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		succ := make([]time.Time, 0, n/10+1)
		fail := make([]time.Time, 0, n)
		for i := range n {
			ft := at(time.Duration((i*7919)%n) * time.Second)
			if i%10 == 0 {
				succ = append(succ, ft)
			} else {
				fail = append(fail, ft)
			}
		}
		b.Run("n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			rec := Record{Failures: 3, LastFailure: t0}
			for b.Loop() {
				_ = rec.Advance(succ, fail)
			}
		})
	}
}

func TestAdvanceFuncSkips(t *testing.T) {
	succ := []time.Time{at(time.Hour), t0}
	fail := []time.Time{at(time.Second), at(2 * time.Hour), at(2 * time.Second)}
	// The success at one hour and the failure at two hours are skipped.
	got := AdvanceFunc(Record{Failures: 7, LastFailure: at(-time.Hour)},
		len(succ), func(i int) (time.Time, bool) { return succ[i], i != 0 },
		len(fail), func(i int) (time.Time, bool) { return fail[i], i != 1 })
	if want := (Record{Failures: 2, LastFailure: at(2 * time.Second)}); got != want {
		t.Errorf("AdvanceFunc = %+v, want %+v", got, want)
	}
	none := AdvanceFunc(Record{Failures: 7, LastFailure: t0}, 1, func(int) (time.Time, bool) { return at(time.Hour), false }, 0, nil)
	if want := (Record{Failures: 7, LastFailure: t0}); none != want {
		t.Errorf("AdvanceFunc with every entry skipped = %+v, want %+v", none, want)
	}
}
