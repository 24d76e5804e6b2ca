package backoff_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

func TestAdvance(t *testing.T) {
	tests := []struct {
		name      string
		start     plainbackoff.Record
		succeeded []time.Time
		failed    []time.Time
		want      plainbackoff.Record
	}{
		{
			name: "nothing new on an empty record",
			want: plainbackoff.Record{},
		},
		{
			name:  "nothing new keeps the record",
			start: plainbackoff.Record{Failures: 2, LastFailure: t0},
			want:  plainbackoff.Record{Failures: 2, LastFailure: t0},
		},
		{
			name:   "one failure",
			failed: []time.Time{t0},
			want:   plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
		{
			name:   "two failures in any order: the latest is the last failure",
			failed: []time.Time{t0, at(-time.Millisecond)},
			want:   plainbackoff.Record{Failures: 2, LastFailure: t0},
		},
		{
			name:   "failures add to the stored count",
			start:  plainbackoff.Record{Failures: 2, LastFailure: at(-time.Minute)},
			failed: []time.Time{t0},
			want:   plainbackoff.Record{Failures: 3, LastFailure: t0},
		},
		{
			name:   "an older new failure keeps the later stored last failure",
			start:  plainbackoff.Record{Failures: 2, LastFailure: t0},
			failed: []time.Time{at(-time.Minute)},
			want:   plainbackoff.Record{Failures: 3, LastFailure: t0},
		},
		{
			name:   "count saturates at MaxInt32",
			start:  plainbackoff.Record{Failures: math.MaxInt32 - 1, LastFailure: t0},
			failed: []time.Time{at(1), at(2), at(3)},
			want:   plainbackoff.Record{Failures: math.MaxInt32, LastFailure: at(3)},
		},
		{
			name:      "a success after the failures resets",
			succeeded: []time.Time{t0},
			failed:    []time.Time{at(-2 * time.Millisecond), at(-time.Millisecond)},
			want:      plainbackoff.Record{},
		},
		{
			name:      "a success resets the stored record",
			start:     plainbackoff.Record{Failures: 5, LastFailure: at(-time.Minute)},
			succeeded: []time.Time{t0},
			want:      plainbackoff.Record{},
		},
		{
			name:      "a success older than the stored failures still resets, as upstream",
			start:     plainbackoff.Record{Failures: 5, LastFailure: t0},
			succeeded: []time.Time{at(-time.Hour)},
			want:      plainbackoff.Record{},
		},
		{
			name:      "failures after the success count, earlier ones do not",
			succeeded: []time.Time{at(-2 * time.Millisecond)},
			failed:    []time.Time{t0, at(-4 * time.Millisecond), at(-3 * time.Millisecond), at(-time.Millisecond)},
			want:      plainbackoff.Record{Failures: 2, LastFailure: t0},
		},
		{
			name:      "failures after the success replace the stored count",
			start:     plainbackoff.Record{Failures: 7, LastFailure: at(-time.Hour)},
			succeeded: []time.Time{at(-time.Minute)},
			failed:    []time.Time{t0},
			want:      plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
		{
			name:      "the latest of several successes is the reset point",
			succeeded: []time.Time{at(-time.Hour), at(-time.Second), at(-time.Minute)},
			failed:    []time.Time{at(-30 * time.Second), t0},
			want:      plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
		{
			name:      "tie: a failure at the instant of the success does not count",
			succeeded: []time.Time{t0},
			failed:    []time.Time{t0},
			want:      plainbackoff.Record{},
		},
		{
			name:      "tie: only failures strictly after the success count",
			succeeded: []time.Time{t0},
			failed:    []time.Time{t0, t0, at(time.Second)},
			want:      plainbackoff.Record{Failures: 1, LastFailure: at(time.Second)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			succ, fail := slices.Clone(tc.succeeded), slices.Clone(tc.failed)
			got := tc.start.Advance(tc.succeeded, tc.failed)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%+v.Advance(%v, %v) mismatch (-want +got):\n%s", tc.start, tc.succeeded, tc.failed, diff)
			}
			assert.Equal(t, succ, tc.succeeded, "Advance modified succeeded")
			assert.Equal(t, fail, tc.failed, "Advance modified failed")

			// The pod form must agree with the time form.
			var succPods, failPods []*corev1.Pod
			for i, ft := range tc.succeeded {
				succPods = append(succPods, finished("s"+strconv.Itoa(i), corev1.PodSucceeded, ft))
			}
			for i, ft := range tc.failed {
				failPods = append(failPods, finished("f"+strconv.Itoa(i), corev1.PodFailed, ft))
			}
			gotPods := backoff.AdvancePods(tc.start, succPods, failPods)
			if diff := cmp.Diff(tc.want, gotPods); diff != "" {
				t.Errorf("AdvancePods mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAdvancePodsUsesFinishTime(t *testing.T) {
	// The failed pod has no container time; its PodReady=False time is after the
	// success, so it counts. The succeeded pod is deleted yet still a success.
	succeeded := []*corev1.Pod{newPod("s").phase(corev1.PodSucceeded).terminated(t0).deleted(at(time.Hour), nil).obj()}
	failed := []*corev1.Pod{
		newPod("f1").phase(corev1.PodFailed).running().ready(corev1.ConditionFalse, at(time.Minute)).obj(),
		newPod("f2").phase(corev1.PodFailed).created(at(-time.Minute)).obj(),
	}
	before := []*corev1.Pod{failed[0].DeepCopy(), failed[1].DeepCopy()}
	got := backoff.AdvancePods(plainbackoff.Record{}, succeeded, failed)
	want := plainbackoff.Record{Failures: 1, LastFailure: at(time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AdvancePods mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, failed); diff != "" {
		t.Errorf("AdvancePods modified or reordered its input (-before +after):\n%s", diff)
	}
}

func TestFromPods(t *testing.T) {
	tests := []struct {
		name string
		pods []*corev1.Pod
		want plainbackoff.Record
	}{
		{name: "no pods", want: plainbackoff.Record{}},
		{
			name: "only running and pending pods",
			pods: []*corev1.Pod{
				newPod("r").phase(corev1.PodRunning).running().obj(),
				newPod("p").phase(corev1.PodPending).obj(),
			},
			want: plainbackoff.Record{},
		},
		{
			name: "only failures",
			pods: []*corev1.Pod{
				finished("f1", corev1.PodFailed, at(-time.Minute)),
				finished("f2", corev1.PodFailed, t0),
				finished("f3", corev1.PodFailed, at(-2*time.Minute)),
			},
			want: plainbackoff.Record{Failures: 3, LastFailure: t0},
		},
		{
			name: "a success after every failure",
			pods: []*corev1.Pod{
				finished("f1", corev1.PodFailed, at(-time.Minute)),
				finished("s", corev1.PodSucceeded, t0),
			},
			want: plainbackoff.Record{},
		},
		{
			name: "failures after the latest success count",
			pods: []*corev1.Pod{
				finished("f1", corev1.PodFailed, at(-3*time.Minute)),
				finished("s1", corev1.PodSucceeded, at(-4*time.Minute)),
				finished("s2", corev1.PodSucceeded, at(-2*time.Minute)),
				finished("f2", corev1.PodFailed, at(-time.Minute)),
				finished("f3", corev1.PodFailed, t0),
				newPod("r").phase(corev1.PodRunning).running().obj(),
			},
			want: plainbackoff.Record{Failures: 2, LastFailure: t0},
		},
		{
			name: "tie: a failure at the instant of the latest success does not count",
			pods: []*corev1.Pod{
				finished("s", corev1.PodSucceeded, t0),
				finished("f", corev1.PodFailed, t0),
			},
			want: plainbackoff.Record{},
		},
		{
			name: "a terminating running pod is not a failure",
			pods: []*corev1.Pod{
				finished("f", corev1.PodFailed, t0),
				newPod("t").phase(corev1.PodRunning).running().deleted(at(time.Minute), ptr.To[int64](30)).obj(),
			},
			want: plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
		{
			name: "nil entries are skipped",
			pods: []*corev1.Pod{nil, finished("f", corev1.PodFailed, t0), nil},
			want: plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := backoff.FromPods(tc.pods)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FromPods mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromPodsFunc(t *testing.T) {
	terminating := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil
	}
	pods := []*corev1.Pod{
		finished("s", corev1.PodSucceeded, at(-time.Hour)),
		newPod("s-deleted").phase(corev1.PodSucceeded).terminated(t0).deleted(at(time.Hour), nil).obj(),
		finished("f", corev1.PodFailed, at(time.Second)),
		newPod("t").phase(corev1.PodRunning).running().deleted(at(time.Minute), ptr.To[int64](30)).obj(),
		newPod("r").phase(corev1.PodRunning).running().obj(),
	}
	var calledWith []string
	got := backoff.FromPodsFunc(pods, func(p *corev1.Pod) bool {
		calledWith = append(calledWith, p.Name)
		return terminating(p)
	})
	want := plainbackoff.Record{Failures: 2, LastFailure: at(30 * time.Second)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromPodsFunc mismatch (-want +got):\n%s", diff)
	}
	assert.Equal(t, []string{"f", "t", "r"}, calledWith, "isFailed must see each non-succeeded pod once")

	gotNil := backoff.FromPodsFunc(pods, nil)
	if diff := cmp.Diff(backoff.FromPods(pods), gotNil); diff != "" {
		t.Errorf("FromPodsFunc(pods, nil) differs from FromPods (-want +got):\n%s", diff)
	}
}

// TestFromPodsAgreesWithAdvance checks on random pods that rebuilding gives what a
// controller that saw every pod in one sync would have recorded.
func TestFromPodsAgreesWithAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	phases := []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed, corev1.PodFailed, corev1.PodRunning}
	for round := range 200 {
		var pods, succ, fail []*corev1.Pod
		for i := range rng.IntN(20) {
			ph := phases[rng.IntN(len(phases))]
			// Whole seconds on a small range make ties common.
			p := finished(strconv.Itoa(i), ph, at(time.Duration(rng.IntN(10))*time.Second))
			pods = append(pods, p)
			switch ph {
			case corev1.PodSucceeded:
				succ = append(succ, p)
			case corev1.PodFailed:
				fail = append(fail, p)
			}
		}
		want := backoff.AdvancePods(plainbackoff.Record{}, succ, fail)
		if diff := cmp.Diff(want, backoff.FromPods(pods)); diff != "" {
			t.Fatalf("round %d: FromPods differs from AdvancePods(Record{}) (-want +got):\n%s", round, diff)
		}
	}
}

func TestFromPodsDoesNotAllocate(t *testing.T) {
	pods := makePods(100)
	allocs := testing.AllocsPerRun(20, func() { _ = backoff.FromPods(pods) })
	assert.Zero(t, allocs)
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		a, b plainbackoff.Record
		want plainbackoff.Record
	}{
		{name: "both zero", want: plainbackoff.Record{}},
		{
			name: "restart: the stored record is empty, the rebuilt one wins",
			b:    plainbackoff.Record{Failures: 3, LastFailure: t0},
			want: plainbackoff.Record{Failures: 3, LastFailure: t0},
		},
		{
			name: "deleted pods: same last failure, the higher count wins",
			a:    plainbackoff.Record{Failures: 5, LastFailure: t0},
			b:    plainbackoff.Record{Failures: 2, LastFailure: t0},
			want: plainbackoff.Record{Failures: 5, LastFailure: t0},
		},
		{
			name: "the later last failure wins over a higher count",
			a:    plainbackoff.Record{Failures: 5, LastFailure: at(-time.Minute)},
			b:    plainbackoff.Record{Failures: 1, LastFailure: t0},
			want: plainbackoff.Record{Failures: 1, LastFailure: t0},
		},
		{
			name: "equal records",
			a:    plainbackoff.Record{Failures: 2, LastFailure: t0},
			b:    plainbackoff.Record{Failures: 2, LastFailure: t0},
			want: plainbackoff.Record{Failures: 2, LastFailure: t0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plainbackoff.Merge(tc.a, tc.b)); diff != "" {
				t.Errorf("Merge(a, b) mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, plainbackoff.Merge(tc.b, tc.a)); diff != "" {
				t.Errorf("Merge(b, a) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordRemaining(t *testing.T) {
	tests := []struct {
		name   string
		rec    plainbackoff.Record
		policy plainbackoff.Policy
		now    time.Time
		want   time.Duration
	}{
		{name: "zero record", now: t0, want: 0},
		{name: "one failure just now", rec: plainbackoff.Record{Failures: 1, LastFailure: t0}, now: t0, want: 10 * time.Second},
		{name: "three failures, 15s ago", rec: plainbackoff.Record{Failures: 3, LastFailure: t0}, now: at(15 * time.Second), want: 25 * time.Second},
		{name: "many failures capped", rec: plainbackoff.Record{Failures: math.MaxInt32, LastFailure: t0}, now: t0, want: 10 * time.Minute},
		{name: "elapsed", rec: plainbackoff.Record{Failures: 2, LastFailure: t0}, now: at(time.Minute), want: 0},
		{name: "custom policy", rec: plainbackoff.Record{Failures: 2, LastFailure: t0}, policy: plainbackoff.Policy{Base: time.Second}, now: t0, want: 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rec.Remaining(tc.policy, tc.now)
			assert.Equal(t, tc.want, got, "%+v.Remaining(%+v, %v) = %v, want %v", tc.rec, tc.policy, tc.now, got, tc.want)
		})
	}
}

// makePods returns n finished pods: mostly failed, with a success every 10 pods, at
// distinct times in shuffled order.
func makePods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range n {
		phase := corev1.PodFailed
		if i%10 == 0 {
			phase = corev1.PodSucceeded
		}
		pods[i] = finished(strconv.Itoa(i), phase, at(time.Duration((i*7919)%n)*time.Second))
	}
	return pods
}

var sizes = []int{10, 1000, 100000}

func BenchmarkAdvancePods(b *testing.B) {
	for _, n := range sizes {
		var succ, fail []*corev1.Pod
		for _, p := range makePods(n) {
			if p.Status.Phase == corev1.PodSucceeded {
				succ = append(succ, p)
			} else {
				fail = append(fail, p)
			}
		}
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = backoff.AdvancePods(plainbackoff.Record{}, succ, fail)
			}
		})
	}
}

func BenchmarkFromPods(b *testing.B) {
	for _, n := range sizes {
		pods := makePods(n)
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = backoff.FromPods(pods)
			}
		})
	}
}
