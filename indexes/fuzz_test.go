package indexes

import (
	"errors"
	plainindexes "github.com/jobkit/jobkit/plain/indexes"
	"math"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jobkit/jobkit/owner"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

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

		ix, err := PodIndex(owner.BatchJob, pod)
		want, ok := valid(index)
		switch {
		case !present:
			if err == nil || ix != plainindexes.Unknown {
				t.Fatalf("PodIndex(owner.BatchJob, no annotation) = %d, %v", ix, err)
			}
		case ok:
			if err != nil || ix != want {
				t.Fatalf("PodIndex(owner.BatchJob, %q) = %d, %v; want %d", index, ix, err, want)
			}
		default:
			var aerr *AnnotationError
			if !errors.As(err, &aerr) || ix != plainindexes.Unknown || aerr.Value != index {
				t.Fatalf("PodIndex(owner.BatchJob, %q) = %d, %v; want plainindexes.Unknown and an *AnnotationError", index, ix, err)
			}
		}

		fc, err := PodFailureCount(owner.BatchJob, pod)
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
			t.Fatalf("PodFailureCount(owner.BatchJob, %q, %q) = %+v, want {%d %d}", failed, ignored, fc, wantF, wantI)
		}
		if (err == nil) != (okF && okI) {
			t.Fatalf("PodFailureCount(owner.BatchJob, %q, %q) error = %v, want error: %v", failed, ignored, err, !(okF && okI))
		}

		// What SetFailureCountAnnotations writes reads back the same.
		shaped := pod.DeepCopy()
		SetFailureCountAnnotations(owner.BatchJob, shaped, plainindexes.NextFailureCount(fc, present && len(failed)%2 == 0))
		back, err := PodFailureCount(owner.BatchJob, shaped)
		if err != nil || back != plainindexes.NextFailureCount(fc, present && len(failed)%2 == 0) {
			t.Fatalf("PodFailureCount(owner.BatchJob, SetFailureCountAnnotations()) = %+v, %v", back, err)
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

		fc, err := ReplacementFailureCount(owner.BatchJob, prev, ignoredNow)

		if !cmp.Equal(before, prev) {
			t.Fatalf("ReplacementFailureCount modified the failed pod: %v", cmp.Diff(before, prev))
		}
		if prev == nil {
			if err != nil || fc != (plainindexes.FailureCount{}) {
				t.Fatalf("ReplacementFailureCount(owner.BatchJob, nil) = %+v, %v; want zero", fc, err)
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
			t.Fatalf("ReplacementFailureCount(owner.BatchJob, %q, %q, ignored=%v) = %+v, want {%d %d}", failed, ignored, ignoredNow, fc, wantF, wantI)
		}
		if (err == nil) != (okF && okI) {
			t.Fatalf("ReplacementFailureCount(owner.BatchJob, %q, %q) error = %v, want an error: %v", failed, ignored, err, !(okF && okI))
		}
		var aerr *AnnotationError
		if err != nil && !errors.As(err, &aerr) {
			t.Fatalf("ReplacementFailureCount error %v is not an *AnnotationError", err)
		}

		pod := &corev1.Pod{}
		SetFailureCountAnnotations(owner.BatchJob, pod, fc)
		back, err := PodFailureCount(owner.BatchJob, pod)
		if err != nil || back != fc {
			t.Fatalf("PodFailureCount(owner.BatchJob, SetFailureCountAnnotations(owner.BatchJob, %+v)) = %+v, %v", fc, back, err)
		}
		if got, want := fc.Exhausts(limit), int64(fc.Failed) >= int64(limit); got != want {
			t.Fatalf("%+v.Exhausts(%d) = %v, want %v", fc, limit, got, want)
		}
	})
}
