package plan

import (
	"fmt"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

var tbBenchSizes = []int{10, 1000, 10000, 100000}

// tbBenchNonIndexed is a NonIndexed Job in mid-run with n pods, in contiguous
// blocks: half succeeded and already counted (without finalizer), 5% succeeded and
// still carrying the finalizer (up to 250 of them already in
// uncountedTerminatedPods), 10% failed and counted, 1% failed and new, the rest
// active (a third of them ready). Parallelism leaves room for ten more pods.
func tbBenchNonIndexed(n int) Input {
	var pods []*corev1.Pod
	var counted, failed, active int32
	var uncounted []types.UID
	for i := range n {
		name := "p-" + strconv.Itoa(i)
		switch r := i * 100 / n; {
		case r < 50:
			pods = append(pods, tbPod(name, tbSucceeded, tbNoFinalizer))
			counted++
		case r < 55:
			pods = append(pods, tbPod(name, tbSucceeded))
			if len(uncounted) < 250 && i%2 == 0 {
				uncounted = append(uncounted, types.UID(name))
			}
		case r < 65:
			pods = append(pods, tbPod(name, tbFailed, tbNoFinalizer))
			failed++
		case r < 66:
			pods = append(pods, tbPod(name, tbFailed))
		default:
			if i%3 == 0 {
				pods = append(pods, tbPod(name, tbReady))
			} else {
				pods = append(pods, tbPod(name))
			}
			active++
		}
	}
	job := tbJob(tbSize(int32(2*n), active+10), tbBackoffLimit(int32(n)), tbStatus(func(s *batchv1.JobStatus) {
		s.Succeeded, s.Failed, s.Active = counted, failed, active
		s.UncountedTerminatedPods.Succeeded = uncounted
	}))
	return tbInput(job, pods...)
}

// tbBenchIndexed is an Indexed Job with completions n in mid-run, one pod per index,
// in blocks of ten indexes: five succeeded (counted in completedIndexes, except the
// first of every other block, new and with finalizer), one failed and counted and
// not yet replaced, four active (one ready). So completedIndexes has n/10
// intervals, and the pending indexes are created up to the cap.
func tbBenchIndexed(n int) Input {
	var pods []*corev1.Pod
	var completed []int
	var failed, active int32
	for i := range n {
		name := "p-" + strconv.Itoa(i)
		switch r := i % 10; {
		case r < 5 && i%20 == 0:
			pods = append(pods, tbPod(name, tbIx(i), tbSucceeded))
		case r < 5:
			pods = append(pods, tbPod(name, tbIx(i), tbSucceeded, tbNoFinalizer))
			completed = append(completed, i)
		case r == 5:
			pods = append(pods, tbPod(name, tbIx(i), tbFailed, tbNoFinalizer))
			failed++
		default:
			if r == 9 {
				pods = append(pods, tbPod(name, tbIx(i), tbReady))
			} else {
				pods = append(pods, tbPod(name, tbIx(i)))
			}
			active++
		}
	}
	done := plainindexes.FromIndexes(completed)
	job := tbJob(tbIndexed, tbSize(int32(n), int32(n)), tbBackoffLimit(int32(n)), tbStatus(func(s *batchv1.JobStatus) {
		s.CompletedIndexes, s.Succeeded = done.String(), int32(done.Count())
		s.Failed, s.Active = failed, active
	}))
	return tbInput(job, pods...)
}

func BenchmarkCompute(b *testing.B) {
	for _, kind := range []struct {
		name  string
		input func(n int) Input
	}{
		{"NonIndexed", tbBenchNonIndexed},
		{"Indexed", tbBenchIndexed},
	} {
		for _, n := range tbBenchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", kind.name, n), func(b *testing.B) {
				in := kind.input(n)
				if p, err := Compute(in); err != nil || p.Skip != "" || len(p.Warnings) > 0 {
					b.Fatalf("Compute: %v %q %q", err, p.Skip, p.Warnings)
				}
				b.ReportAllocs()
				for b.Loop() {
					_, _ = Compute(in)
				}
			})
		}
	}
}

// TestBenchInputsAreMidRun checks that the benchmark inputs exercise what they say:
// the Job neither fails nor finishes, records new finished pods, and creates pods.
func TestBenchInputsAreMidRun(t *testing.T) {
	for _, n := range []int{10, 1000} {
		for name, in := range map[string]Input{"NonIndexed": tbBenchNonIndexed(n), "Indexed": tbBenchIndexed(n)} {
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				p := tbCompute(t, in)
				if len(p.Conditions) > 0 || len(p.Create) == 0 || len(p.RemoveFinalizers) == 0 || p.RecordStatus == nil {
					t.Errorf("benchmark input is not mid-run:\n%s", p)
				}
			})
		}
	}
}

// TestComputeAllocationsPerPod guards against per-pod allocations: beyond the pods it
// creates, one plan allocates about as much for 10,000 pods as for 1,000.
func TestComputeAllocationsPerPod(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 11,000 pods")
	}
	for _, kind := range []struct {
		name  string
		input func(n int) Input
	}{
		{"NonIndexed", tbBenchNonIndexed},
		{"Indexed", tbBenchIndexed},
	} {
		t.Run(kind.name, func(t *testing.T) {
			allocs := func(n int) float64 {
				in := kind.input(n)
				in.Options.MaxCreatesPerSync = 10
				return testing.AllocsPerRun(3, func() { _, _ = Compute(in) })
			}
			small, large := allocs(1000), allocs(10000)
			t.Logf("allocations per plan: %.0f for 1,000 pods, %.0f for 10,000", small, large)
			if large > small+100 {
				t.Errorf("Compute allocates %.0f times for 10,000 pods and %.0f for 1,000: something allocates per pod", large, small)
			}
		})
	}
}
