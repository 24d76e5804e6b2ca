package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/internal/podutil"

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

// tbBenchKinds are the two Jobs the Compute benchmarks plan, by completion mode.
var tbBenchKinds = []struct {
	name  string
	input func(n int) Input
}{
	{"NonIndexed", tbBenchNonIndexed},
	{"Indexed", tbBenchIndexed},
}

// BenchmarkCompute plans the benchmark Jobs with their pods allocated one after the
// other and listed in that order: the best case for the memory caches.
func BenchmarkCompute(b *testing.B) {
	for _, kind := range tbBenchKinds {
		for _, n := range tbBenchSizes {
			b.Run(fmt.Sprintf("%s/n=%d", kind.name, n), func(b *testing.B) {
				tbBenchCompute(b, kind.input(n))
			})
		}
	}
}

// BenchmarkComputeInformerLayout plans the same Jobs with their pods laid out as a
// client-go cache holds them (tbInformerLayout): decoded one by one in event order,
// among other Jobs' pods and events, and listed in the cache's order. "read" reads
// every pod (no FactCache); "facts" gives Compute a FactCache and, as a controller's
// syncs would, lists two versions of the pods in turn, with 1% of them decoded
// anew in the second (a new version of the pod: new pointer, same content), so
// each sync finds 1% of its pods unknown.
func BenchmarkComputeInformerLayout(b *testing.B) {
	for _, kind := range tbBenchKinds {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/n=%d", kind.name, n), func(b *testing.B) {
				in, heap := tbInformerLayout(kind.input(n), uint64(n))
				b.Run("read", func(b *testing.B) { tbBenchCompute(b, in) })
				b.Run("facts", func(b *testing.B) {
					in.Facts = new(FactCache)
					tbBenchCompute(b, in, tbRenewed(in.Pods, 100, uint64(n)))
				})
				runtime.KeepAlive(heap)
			})
		}
	}
}

// tbRenewed returns pods with one in every of them replaced by a copy decoded anew
// from JSON, as an informer stores a new version of a pod (chosen by seed).
func tbRenewed(pods []*corev1.Pod, every int, seed uint64) []*corev1.Pod {
	rng := rand.New(rand.NewPCG(seed, 38))
	out := slices.Clone(pods)
	for i := range out {
		if rng.IntN(every) == 0 {
			data, err := json.Marshal(out[i])
			if err != nil {
				panic(err)
			}
			out[i] = tbDecodePod(data)
		}
	}
	return out
}

// tbBenchCompute checks that in plans a Job mid-run without warnings, then measures
// Compute on it. Besides the time, it reports cpu-ns/op, the CPU time of the thread
// that ran the loop (Linux; the concurrent garbage collector's is not in it): on a
// machine shared with other work, the time waiting for a core inflates ns/op but not
// cpu-ns/op (the caches the other work evicts still do).
//
// With other lists of pods, the syncs list in.Pods and the others in turn.
func tbBenchCompute(b *testing.B, in Input, others ...[]*corev1.Pod) {
	b.Helper()
	if p, err := Compute(in); err != nil || p.Skip != "" || len(p.Warnings) > 0 {
		b.Fatalf("Compute: %v %q %q", err, p.Skip, p.Warnings)
	}
	lists := append([][]*corev1.Pod{in.Pods}, others...)
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := tbThreadCPU()
	k := 0
	for b.Loop() {
		k++
		in.Pods = lists[k%len(lists)]
		_, _ = Compute(in)
	}
	if cpu := tbThreadCPU() - cpu; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// tbInformerLayout returns in with its pods replaced by copies laid out in memory as
// an informer's cache holds them after the Job ran for a while, and the other
// objects that cache holds (keep them alive while in is used).
//
// Every pod is decoded from JSON, as from a watch stream, so each string, map and
// slice of it is an allocation of its own, once per event of the pod (added,
// running, ready, finished), in the order of the events: a pod's last version is
// decoded when it last changed, its earlier versions are garbage. Between two events
// the cache decodes an event of another Job's pod and an Event object, and a few
// strings are allocated (the controller's logs), some of them kept. The pods are
// listed in a fixed shuffle, as a cache lists them (in the order of a map). seed
// chooses the event times and the shuffle.
func tbInformerLayout(in Input, seed uint64) (Input, []any) {
	rng := rand.New(rand.NewPCG(seed, 37))
	n := len(in.Pods)
	wire := make([][]byte, n)
	type event struct{ at, pod int }
	var events []event
	for i, pod := range in.Pods {
		var err error
		if wire[i], err = json.Marshal(pod); err != nil {
			panic(err)
		}
		// Created in order, running soon after, finished or ready a while later.
		events = append(events, event{i, i}, event{i + rng.IntN(50), i})
		if isTerminal(pod) || podutil.IsReady(pod) {
			events = append(events, event{i + rng.IntN(n/5+1), i})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.at - b.at })

	others := make([]*corev1.Pod, n) // another Job's pods, as many
	otherWire, err := json.Marshal(tbPod("other", tbOwnedBy("other-job")))
	if err != nil {
		panic(err)
	}
	recent := make([]any, 1024) // the latest Events and log lines
	pods := make([]*corev1.Pod, n)
	for k, ev := range events {
		pods[ev.pod] = tbDecodePod(wire[ev.pod])
		o := tbDecodePod(otherWire)
		o.Name = "other-" + strconv.Itoa(k%n)
		o.UID = types.UID(o.Name)
		others[k%n] = o
		recent[k%len(recent)] = &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: pods[ev.pod].Name + "." + strconv.Itoa(k), Namespace: "ns"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pods[ev.pod].Name, UID: pods[ev.pod].UID},
			Reason:         "Started",
			Message:        "Started container " + pods[ev.pod].Spec.Containers[0].Name,
		}
		recent[(k+512)%len(recent)] = fmt.Sprintf("sync of job %q took %d µs", "ns/job", k)
	}
	rng.Shuffle(n, func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	in.Pods = pods
	return in, []any{others, recent}
}

// tbDecodePod decodes a pod from its JSON form.
func tbDecodePod(data []byte) *corev1.Pod {
	pod := new(corev1.Pod)
	if err := json.Unmarshal(data, pod); err != nil {
		panic(err)
	}
	return pod
}

// TestBenchInputsAreMidRun checks that the benchmark inputs exercise what they say:
// the Job neither fails nor finishes, records new finished pods, and creates pods.
func TestBenchInputsAreMidRun(t *testing.T) {
	for _, n := range []int{10, 1000} {
		for _, kind := range tbBenchKinds {
			informer, _ := tbInformerLayout(kind.input(n), uint64(n))
			for _, c := range []struct {
				layout string
				in     Input
			}{{"", kind.input(n)}, {"/informer", informer}} {
				in := c.in
				t.Run(fmt.Sprintf("%s%s/n=%d", kind.name, c.layout, n), func(t *testing.T) {
					p := tbCompute(t, in)
					if len(p.Conditions) > 0 || len(p.Create) == 0 || len(p.RemoveFinalizers) == 0 || p.RecordStatus == nil {
						t.Errorf("benchmark input is not mid-run:\n%s", p)
					}
				})
			}
		}
	}
}

// TestComputeAllocationsPerPod guards against per-pod allocations: beyond the pods it
// creates, one plan allocates about as much for 10,000 pods as for 1,000.
func TestComputeAllocationsPerPod(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 11,000 pods")
	}
	for _, kind := range tbBenchKinds {
		for _, facts := range []bool{false, true} {
			name := kind.name
			if facts {
				name += "/facts" // every sync but the first finds every pod known
			}
			t.Run(name, func(t *testing.T) {
				allocs := func(n int) float64 {
					in := kind.input(n)
					in.Options.MaxCreatesPerSync = 10
					if facts {
						in.Facts = new(FactCache)
					}
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
}

// BenchmarkIndexOutcomes reads the finished indexes of the Indexed benchmark Job and
// its pods on their own (the part of Compute that decides them).
func BenchmarkIndexOutcomes(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			in := tbBenchIndexed(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := in.Workload.IndexOutcomes(in.Owner, in.Pods); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
