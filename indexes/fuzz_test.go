package indexes

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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

// FuzzPodAnnotations checks that reading the annotations never panics and fails exactly
// when a value is not a non-negative 32-bit decimal integer.
func FuzzPodAnnotations(f *testing.F) {
	for _, s := range []string{"0", "7", "-1", "x", "", "+3", "99999999999", "2147483647", "2147483648", " 1", "1_000"} {
		f.Add(s, s, s, true)
	}
	f.Fuzz(func(t *testing.T, index, failed, ignored string, present bool) {
		ann := map[string]string{}
		if present {
			ann[batchv1.JobCompletionIndexAnnotation] = index
			ann[batchv1.JobIndexFailureCountAnnotation] = failed
			ann[batchv1.JobIndexIgnoredFailureCountAnnotation] = ignored
		}
		pod := &corev1.Pod{}
		pod.Annotations = ann
		valid := func(s string) (int, bool) {
			v, err := strconv.Atoi(s)
			return v, err == nil && v >= 0 && v <= math.MaxInt32
		}

		ix, err := PodIndex(pod)
		want, ok := valid(index)
		switch {
		case !present:
			if err == nil || ix != Unknown {
				t.Fatalf("PodIndex(no annotation) = %d, %v", ix, err)
			}
		case ok:
			if err != nil || ix != want {
				t.Fatalf("PodIndex(%q) = %d, %v; want %d", index, ix, err, want)
			}
		default:
			var aerr *AnnotationError
			if !errors.As(err, &aerr) || ix != Unknown || aerr.Value != index {
				t.Fatalf("PodIndex(%q) = %d, %v; want Unknown and an *AnnotationError", index, ix, err)
			}
		}

		fc, err := PodFailureCount(pod)
		wantF, okF := valid(failed)
		wantI, okI := valid(ignored)
		if !present {
			wantF, okF, wantI, okI = 0, true, 0, true
		}
		if !okF {
			wantF = 0
		}
		if !okI {
			wantI = 0
		}
		if int(fc.Failed) != wantF || int(fc.Ignored) != wantI {
			t.Fatalf("PodFailureCount(%q, %q) = %+v, want {%d %d}", failed, ignored, fc, wantF, wantI)
		}
		if (err == nil) != (okF && okI) {
			t.Fatalf("PodFailureCount(%q, %q) error = %v, want error: %v", failed, ignored, err, !(okF && okI))
		}

		// What SetFailureCountAnnotations writes reads back the same.
		shaped := pod.DeepCopy()
		SetFailureCountAnnotations(shaped, NextFailureCount(fc, present && len(failed)%2 == 0))
		back, err := PodFailureCount(shaped)
		if err != nil || back != NextFailureCount(fc, present && len(failed)%2 == 0) {
			t.Fatalf("PodFailureCount(SetFailureCountAnnotations()) = %+v, %v", back, err)
		}
	})
}

// FuzzFailureCountAnnotations checks the failure counts a replacement pod inherits
// from the failed pod it replaces, over arbitrary annotation values: it never
// panics nor modifies the failed pod; a readable count moves up by exactly one
// (failed or ignored, saturating), an unreadable one counts as 0 and is reported
// naming its annotation; what the replacement carries reads back the same; and the
// index is exhausted exactly when the inherited failed count reaches the limit.
func FuzzFailureCountAnnotations(f *testing.F) {
	f.Add("0", "0", false, int32(1), true)
	f.Add("3", "", true, int32(3), true)
	f.Add("2147483647", "2147483647", false, int32(2147483647), true)
	f.Add("-1", "x", false, int32(0), true)
	f.Add("", "", false, int32(2), false)
	f.Add("007", " 1", true, int32(7), true)
	f.Fuzz(func(t *testing.T, failed, ignored string, ignoredNow bool, limit int32, withPod bool) {
		var prev *corev1.Pod
		if withPod {
			prev = &corev1.Pod{}
			prev.Annotations = map[string]string{
				batchv1.JobIndexFailureCountAnnotation:        failed,
				batchv1.JobIndexIgnoredFailureCountAnnotation: ignored,
			}
		}
		before := prev.DeepCopy()

		fc, err := ReplacementFailureCount(prev, ignoredNow)

		if !cmp.Equal(before, prev) {
			t.Fatalf("ReplacementFailureCount modified the failed pod: %v", cmp.Diff(before, prev))
		}
		if prev == nil {
			if err != nil || fc != (FailureCount{}) {
				t.Fatalf("ReplacementFailureCount(nil) = %+v, %v; want zero", fc, err)
			}
			return
		}
		read := func(s string) (int32, bool) {
			v, err := strconv.ParseInt(s, 10, 32)
			return int32(v), err == nil && v >= 0
		}
		wantF, okF := read(failed)
		wantI, okI := read(ignored)
		if !okF {
			wantF = 0
		}
		if !okI {
			wantI = 0
		}
		step := func(v int32) int32 {
			if v == math.MaxInt32 {
				return v
			}
			return v + 1
		}
		if ignoredNow {
			wantI = step(wantI)
		} else {
			wantF = step(wantF)
		}
		if fc.Failed != wantF || fc.Ignored != wantI {
			t.Fatalf("ReplacementFailureCount(%q, %q, ignored=%v) = %+v, want {%d %d}", failed, ignored, ignoredNow, fc, wantF, wantI)
		}
		if (err == nil) != (okF && okI) {
			t.Fatalf("ReplacementFailureCount(%q, %q) error = %v, want an error: %v", failed, ignored, err, !(okF && okI))
		}
		var aerr *AnnotationError
		if err != nil && !errors.As(err, &aerr) {
			t.Fatalf("ReplacementFailureCount error %v is not an *AnnotationError", err)
		}

		pod := &corev1.Pod{}
		SetFailureCountAnnotations(pod, fc)
		back, err := PodFailureCount(pod)
		if err != nil || back != fc {
			t.Fatalf("PodFailureCount(SetFailureCountAnnotations(%+v)) = %+v, %v", fc, back, err)
		}
		if got, want := fc.Exhausts(limit), int64(fc.Failed) >= int64(limit); got != want {
			t.Fatalf("%+v.Exhausts(%d) = %v, want %v", fc, limit, got, want)
		}
	})
}
