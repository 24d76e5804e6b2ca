package indexes

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "0", "1,3-5,7", "1,2", "5-3", "1-5,3-7", "3,1", "1,,2", "1,", "1-2-3", " 1",
		"+1", "-1", "99999999999", "2147483647", "0-2147483647", ",", "-", "9,8,7-12,0",
	} {
		f.Add(s, int64(NoLimit))
		f.Add(s, int64(6))
	}
	f.Fuzz(func(t *testing.T, s string, limit64 int64) {
		limit := int(limit64)
		got, err := Parse(s, limit)
		requireCanonical(t, got)
		if limit >= 0 && limit <= math.MaxInt32 && len(got) > 0 && got[len(got)-1].Last >= limit {
			t.Fatalf("Parse(%q, %d) = %v: index at or above the limit", s, limit, got)
		}
		var perr *ParseError
		if err != nil && !errors.As(err, &perr) {
			t.Fatalf("Parse(%q, %d) error %v is not a *ParseError", s, limit, err)
		}
		if err != nil {
			_ = err.Error()
			if len(perr.Parts) == 0 {
				t.Fatalf("Parse(%q, %d): *ParseError without parts", s, limit)
			}
			for _, p := range perr.Parts {
				if p.Reason == "" {
					t.Fatalf("Parse(%q, %d): part without a reason: %+v", s, limit, p)
				}
			}
		} else if s != "" && got == nil {
			t.Fatalf("Parse(%q, %d) returned no indexes and no error", s, limit)
		}

		// The formatted set is canonical: it parses back to itself, without error.
		text := got.String()
		back, err := Parse(text, limit)
		if err != nil {
			t.Fatalf("Parse(%q) = %v; reparsing its String() %q failed: %v", s, got, text, err)
		}
		if diff := cmp.Diff(got, back); diff != "" {
			t.Fatalf("Parse(String()) of %q changed the set (-first +second):\n%s", s, diff)
		}
		if again := back.String(); again != text {
			t.Fatalf("String() not stable: %q then %q", text, again)
		}
	})
}

// indexesFromBytes reads little-endian uint32 values, kept within the index range.
func indexesFromBytes(data []byte, spread uint32) []int {
	var xs []int
	for len(data) >= 4 {
		v := binary.LittleEndian.Uint32(data)
		data = data[4:]
		if spread > 0 {
			v %= spread
		}
		xs = append(xs, int(v&math.MaxInt32))
	}
	return xs
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 7, 0, 0, 0}, uint32(0))
	f.Add([]byte{255, 255, 255, 127, 254, 255, 255, 127, 0, 0, 0, 0}, uint32(0))
	f.Add([]byte{9, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0}, uint32(20))
	f.Fuzz(func(t *testing.T, data []byte, spread uint32) {
		xs := indexesFromBytes(data, spread)
		x := FromIndexes(xs)
		requireCanonical(t, x)
		if got, want := x.Count(), len(slices.Compact(slices.Sorted(slices.Values(xs)))); got != want {
			t.Fatalf("FromIndexes(%v).Count() = %d, want %d distinct", xs, got, want)
		}
		for _, v := range xs {
			if !x.Has(v) {
				t.Fatalf("FromIndexes(%v).Has(%d) = false", xs, v)
			}
		}
		back, err := Parse(x.String(), NoLimit)
		if err != nil {
			t.Fatalf("Parse(%q) error: %v", x.String(), err)
		}
		if diff := cmp.Diff(x, back); diff != "" {
			t.Fatalf("Parse(String()) != FromIndexes (-want +got):\n%s", diff)
		}
		// WithSorted and Union agree with FromIndexes on the two halves.
		half := len(xs) / 2
		a, b := FromIndexes(xs[:half]), FromIndexes(xs[half:])
		if diff := cmp.Diff(x, a.Union(b)); diff != "" {
			t.Fatalf("Union mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(x, a.WithSorted(xs[half:])); diff != "" {
			t.Fatalf("WithSorted mismatch (-want +got):\n%s", diff)
		}
		if got, want := a.IntersectionCount(b), a.Count()+b.Count()-x.Count(); got != want {
			t.Fatalf("IntersectionCount = %d, want %d", got, want)
		}
	})
}

func FuzzFirstPending(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0}, []byte{5, 0, 0, 0}, 10, 3)
	f.Add([]byte{}, []byte{}, 0, 1)
	f.Fuzz(func(t *testing.T, d1, d2 []byte, completions, n int) {
		completions %= 200
		n %= 210
		a := FromIndexes(indexesFromBytes(d1, 220))
		b := FromIndexes(indexesFromBytes(d2, 220))
		want := firstPendingSlow(completions, n, nil, a, b)
		got := FirstPending(completions, n, a, b)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("FirstPending(%d, %d, %v, %v) mismatch (-want +got):\n%s", completions, n, a, b, diff)
		}
	})
}

// FuzzOutcomes checks Record against the rule stated plainly, index by index: an index
// failed before stays failed only; otherwise a success (before or now) makes it
// succeeded only; otherwise a failure now makes it failed. Out-of-range indexes are
// dropped, and no index is ever in both sets.
func FuzzOutcomes(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0}, []byte{2, 0, 0, 0}, []byte{2, 0, 0, 0, 1, 0, 0, 0}, []byte{3, 0, 0, 0}, 5)
	f.Add([]byte{}, []byte{}, []byte{9, 0, 0, 0}, []byte{9, 0, 0, 0}, 10)
	f.Fuzz(func(t *testing.T, ps, pf, ns, nf []byte, completions int) {
		completions %= 64
		prev := Outcomes{Succeeded: FromIndexes(indexesFromBytes(ps, 70)), Failed: FromIndexes(indexesFromBytes(pf, 70))}
		// The previous sets come from a status the API server accepted: disjoint.
		prev.Failed = FromIndexes(slices.DeleteFunc(slices.Collect(prev.Failed.All()), prev.Succeeded.Has))
		newS, newF := indexesFromBytes(ns, 70), indexesFromBytes(nf, 70)
		got := prev.Record(completions, newS, newF)

		var wantS, wantF []int
		for x := range 70 {
			switch {
			case prev.Failed.Has(x):
				wantF = append(wantF, x)
			case prev.Succeeded.Has(x) || (x < completions && slices.Contains(newS, x)):
				wantS = append(wantS, x)
			case x < completions && slices.Contains(newF, x):
				wantF = append(wantF, x)
			}
		}
		want := Outcomes{Succeeded: FromIndexes(wantS), Failed: FromIndexes(wantF)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%+v.Record(%d, %v, %v) mismatch (-want +got):\n%s", prev, completions, newS, newF, diff)
		}
		requireCanonical(t, got.Succeeded)
		requireCanonical(t, got.Failed)
	})
}
