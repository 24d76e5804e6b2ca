package podorder

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	plainpodorder "github.com/jobkit/jobkit/plain/podorder"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

// newPod returns an assigned, running, ready pod created at t0 and ready since t0, with
// no restarts: every rule ties unless an option changes it.
func newPod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         "ns",
			Name:              name,
			UID:               types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(t0),
		},
		Spec: corev1.PodSpec{NodeName: "node-a"},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{
				Type:               corev1.PodReady,
				Status:             corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(t0),
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func node(n string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = n } }

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func noConditions(p *corev1.Pod) { p.Status.Conditions = nil }

func readySince(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t) }
}

func created(t time.Time) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(t) }
}

func uid(u string) podOpt { return func(p *corev1.Pod) { p.UID = types.UID(u) } }

func namespace(ns string) podOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

func restarts(counts ...int32) podOpt {
	return func(p *corev1.Pod) {
		for i, c := range counts {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
				corev1.ContainerStatus{Name: fmt.Sprintf("c%d", i), RestartCount: c})
		}
	}
}

// initContainer adds an init container with its status; sidecar makes it restartable.
func initContainer(name string, sidecar bool, count int32) podOpt {
	return func(p *corev1.Pod) {
		c := corev1.Container{Name: name}
		if sidecar {
			c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses,
			corev1.ContainerStatus{Name: name, RestartCount: count})
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name string
		a, b *corev1.Pod
		want int // sign: -1 means a is removed first
	}{
		// Rule 1: unassigned before assigned.
		{name: "unassigned before assigned", a: newPod("a", node("")), b: newPod("b"), want: -1},
		{name: "assigned after unassigned", a: newPod("a"), b: newPod("b", node("")), want: 1},
		{name: "different nodes tie on rule 1", a: newPod("a", node("n2"), created(t0.Add(time.Second))), b: newPod("b", node("n1")), want: -1},
		{name: "unassigned wins over phase", a: newPod("a", node(""), phase(corev1.PodRunning)), b: newPod("b", phase(corev1.PodPending)), want: -1},

		// Rule 2: Pending < Unknown < Running.
		{name: "pending before unknown", a: newPod("a", phase(corev1.PodPending)), b: newPod("b", phase(corev1.PodUnknown)), want: -1},
		{name: "unknown before running", a: newPod("a", phase(corev1.PodUnknown)), b: newPod("b", phase(corev1.PodRunning)), want: -1},
		{name: "running after pending", a: newPod("a", phase(corev1.PodRunning)), b: newPod("b", phase(corev1.PodPending)), want: 1},
		{name: "empty phase ranks as pending", a: newPod("z", phase("")), b: newPod("b", phase(corev1.PodPending)), want: 1},
		{name: "empty phase before unknown", a: newPod("a", phase("")), b: newPod("b", phase(corev1.PodUnknown)), want: -1},
		{name: "phase wins over readiness", a: newPod("a", phase(corev1.PodPending)), b: newPod("b", notReady), want: -1},

		// Rule 3: not ready before ready.
		{name: "not ready before ready", a: newPod("z", notReady), b: newPod("b"), want: -1},
		{name: "no condition counts as not ready", a: newPod("z", noConditions), b: newPod("b"), want: -1},
		{name: "ready after not ready", a: newPod("a"), b: newPod("b", notReady), want: 1},
		{name: "readiness wins over restarts", a: newPod("a", notReady), b: newPod("b", restarts(9)), want: -1},

		// Rule 4: both ready, ready more recently first; zero time is the most recent.
		{name: "ready more recently first", a: newPod("z", readySince(t0.Add(time.Minute))), b: newPod("b"), want: -1},
		{name: "ready longer last", a: newPod("a", readySince(t0.Add(-time.Minute))), b: newPod("b"), want: 1},
		{name: "zero ready time first", a: newPod("z", readySince(time.Time{})), b: newPod("b", readySince(t0.Add(time.Hour))), want: -1},
		{name: "non-zero ready time after zero", a: newPod("a", readySince(t0.Add(time.Hour))), b: newPod("b", readySince(time.Time{})), want: 1},
		{name: "ready time nanoseconds", a: newPod("z", readySince(t0.Add(time.Nanosecond))), b: newPod("b"), want: -1},
		{name: "ready time ignored when both not ready", a: newPod("a", notReady, readySince(t0.Add(-time.Hour))), b: newPod("b", notReady), want: -1},
		{name: "ready time wins over restarts", a: newPod("a", readySince(t0.Add(time.Minute))), b: newPod("b", restarts(5)), want: -1},

		// Rule 5: more restarts first, then more sidecar restarts first.
		{name: "more restarts first", a: newPod("z", restarts(0, 3)), b: newPod("b", restarts(2, 2)), want: -1},
		{name: "fewer restarts last", a: newPod("a", restarts(1)), b: newPod("b", restarts(2)), want: 1},
		{name: "regular restarts before sidecar restarts", a: newPod("a", restarts(1), initContainer("s", true, 0)), b: newPod("b", initContainer("s", true, 9)), want: -1},
		{name: "more sidecar restarts first", a: newPod("z", initContainer("s", true, 2)), b: newPod("b", initContainer("s", true, 1)), want: -1},
		{name: "plain init container restarts do not count", a: newPod("z", initContainer("i", false, 7)), b: newPod("b"), want: 1},
		{name: "init status without spec does not count", a: newPod("z", func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "ghost", RestartCount: 4}}
		}), b: newPod("b"), want: 1},
		{name: "sidecar restarts win over age", a: newPod("a", initContainer("s", true, 1), created(t0.Add(-time.Hour))), b: newPod("b"), want: -1},
		{name: "restarts win over age", a: newPod("a", restarts(1), created(t0.Add(-time.Hour))), b: newPod("b"), want: -1},

		// Rule 6: newer first, zero creation timestamp first.
		{name: "newer first", a: newPod("z", created(t0.Add(time.Second))), b: newPod("b"), want: -1},
		{name: "older last", a: newPod("a", created(t0.Add(-time.Second))), b: newPod("b"), want: 1},
		{name: "zero creation timestamp first", a: newPod("z", created(time.Time{})), b: newPod("b", created(t0.Add(time.Hour))), want: -1},
		{name: "both zero creation timestamps tie", a: newPod("a", created(time.Time{})), b: newPod("b", created(time.Time{})), want: -1},

		// Rule 7: namespace, name, UID.
		{name: "namespace first", a: newPod("z", namespace("a")), b: newPod("a", namespace("b")), want: -1},
		{name: "name", a: newPod("a"), b: newPod("b"), want: -1},
		{name: "name reversed", a: newPod("b"), b: newPod("a"), want: 1},
		{name: "uid", a: newPod("a", uid("2")), b: newPod("a", uid("1")), want: 1},
		{name: "same pod", a: newPod("a"), b: newPod("a"), want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sign(Compare(tc.a, tc.b))
			assert.Equal(t, tc.want, got, "Compare(a, b) = %d, want %d", got, tc.want)
			back := sign(Compare(tc.b, tc.a))
			assert.Equal(t, -tc.want, back, "Compare(b, a) = %d, want %d", back, -tc.want)
		})
	}
}

func TestComparePointerIdentity(t *testing.T) {
	p := newPod("a")
	assert.Zero(t, Compare(p, p))
}

func TestCompareFirstReadyCondition(t *testing.T) {
	// Only the first PodReady condition counts, as in upstream's IsPodReady.
	a := newPod("a", func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}
	})
	b := newPod("b")
	got := sign(Compare(a, b))
	assert.Equal(t, -1, got, "Compare(a, b) = %d, want -1 (a is not ready)", got)
}

// removalOrder lists the names of pods in the order Sort gives.
func removalOrder(pods []*corev1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}

func TestSort(t *testing.T) {
	cases := []struct {
		name string
		pods []*corev1.Pod
		want []string
	}{
		{name: "nil", pods: nil, want: []string{}},
		{name: "one", pods: []*corev1.Pod{newPod("a")}, want: []string{"a"}},
		{
			name: "every rule",
			pods: []*corev1.Pod{
				newPod("old"),
				newPod("running-not-ready", notReady),
				newPod("pending", phase(corev1.PodPending), notReady),
				newPod("unassigned", node(""), phase(corev1.PodPending), notReady),
				newPod("unknown", phase(corev1.PodUnknown), notReady),
				newPod("ready-recently", readySince(t0.Add(time.Hour))),
				newPod("restarted", restarts(2)),
				newPod("sidecar-restarted", initContainer("s", true, 2)),
				newPod("new", created(t0.Add(time.Minute))),
				newPod("old-b"),
			},
			want: []string{
				"unassigned", "pending", "unknown", "running-not-ready", "ready-recently",
				"restarted", "sidecar-restarted", "new", "old", "old-b",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods := slices.Clone(tc.pods)
			Sort(pods)
			if diff := cmp.Diff(tc.want, removalOrder(pods)); diff != "" {
				t.Errorf("Sort() order mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// randomPods builds pods that tie on some rules and differ on others.
func randomPods(r *rand.Rand, n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	phases := []corev1.PodPhase{corev1.PodPending, corev1.PodUnknown, corev1.PodRunning, ""}
	for i := range pods {
		var opts []podOpt
		if r.IntN(4) == 0 {
			opts = append(opts, node(""))
		}
		opts = append(opts, phase(phases[r.IntN(len(phases))]))
		if r.IntN(3) == 0 {
			opts = append(opts, notReady)
		}
		opts = append(opts, readySince(t0.Add(time.Duration(r.IntN(3))*time.Minute)))
		if r.IntN(8) == 0 {
			opts = append(opts, readySince(time.Time{}))
		}
		opts = append(opts, restarts(int32(r.IntN(3))), initContainer("s", true, int32(r.IntN(2))))
		opts = append(opts, created(t0.Add(time.Duration(r.IntN(3))*time.Second)))
		if r.IntN(8) == 0 {
			opts = append(opts, created(time.Time{}))
		}
		opts = append(opts, uid(fmt.Sprint(r.IntN(3))))
		pods[i] = newPod(fmt.Sprintf("p%d", r.IntN(n/2+1)), opts...)
	}
	return pods
}

func TestSortMatchesCompareAndIgnoresInputOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		pods := randomPods(r, 40)
		want := slices.Clone(pods)
		slices.SortStableFunc(want, Compare)

		got := slices.Clone(pods)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		Sort(got)
		for i := range want {
			// Pods equal under Compare are interchangeable; anything else must match.
			if got[i] != want[i] && Compare(got[i], want[i]) != 0 {
				t.Fatalf("round %d: Sort()[%d] = %s, want %s", round, i, got[i].Name, want[i].Name)
			}
		}
		for i := 1; i < len(got); i++ {
			require.LessOrEqual(t, Compare(got[i-1], got[i]), 0, "round %d: Sort() not ordered at %d", round, i)
		}
	}
}

func TestCompareIsAStrictOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pods := randomPods(r, 30)
	for _, a := range pods {
		for _, b := range pods {
			ab, ba := sign(Compare(a, b)), sign(Compare(b, a))
			require.Equal(t, -ab, ba, "Compare(%s, %s) = %d but Compare(b, a) = %d", a.Name, b.Name, ab, ba)
			for _, c := range pods {
				if Compare(a, b) < 0 && Compare(b, c) < 0 {
					require.Negative(t, Compare(a, c), "not transitive: %s < %s < %s", a.Name, b.Name, c.Name)
				}
			}
		}
	}
}

func TestSortDoesNotModifyPods(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pods := randomPods(r, 20)
	before := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		before[i] = p.DeepCopy()
	}
	Sort(pods)
	slices.SortFunc(before, Compare)
	for i := range pods {
		if diff := cmp.Diff(before[i], pods[i]); diff != "" {
			t.Fatalf("Sort() modified pod %d (-before +after):\n%s", i, diff)
		}
	}
}

func TestCompareDoesNotAllocate(t *testing.T) {
	a := newPod("a", restarts(1, 2), initContainer("s", true, 1))
	b := newPod("b", restarts(1, 2), initContainer("s", true, 1))
	allocs := testing.AllocsPerRun(100, func() { _ = Compare(a, b) })
	assert.Zero(t, allocs, "Compare allocates %v times, want 0", allocs)
}

// TestFacts pins what is read of a pod, rule by rule (the package documentation's list).
func TestFacts(t *testing.T) {
	later := t0.Add(time.Hour)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want plainpodorder.Pod
	}{
		{name: "assigned, running, ready", pod: newPod("a"), want: plainpodorder.Pod{Assigned: true, Phase: plainpodorder.PhaseRunning,
			Ready: true, ReadySince: t0, Created: t0, Namespace: "ns", Name: "a", UID: "uid-a"}},
		{name: "unassigned, pending, not ready", pod: newPod("b", node(""), phase(corev1.PodPending), notReady),
			want: plainpodorder.Pod{Phase: plainpodorder.PhasePending, Created: t0, Namespace: "ns", Name: "b", UID: "uid-b"}},
		{name: "empty phase ranks with Pending", pod: newPod("c", phase(""), noConditions),
			want: plainpodorder.Pod{Assigned: true, Phase: plainpodorder.PhasePending, Created: t0, Namespace: "ns", Name: "c", UID: "uid-c"}},
		{name: "unknown phase", pod: newPod("d", phase(corev1.PodUnknown), readySince(later), created(later)),
			want: plainpodorder.Pod{Assigned: true, Phase: plainpodorder.PhaseUnknown, Ready: true, ReadySince: later, Created: later,
				Namespace: "ns", Name: "d", UID: "uid-d"}},
		{name: "highest restarts, sidecars apart", pod: newPod("e", restarts(1, 4, 2), initContainer("init", false, 9), initContainer("side", true, 3)),
			want: plainpodorder.Pod{Assigned: true, Phase: plainpodorder.PhaseRunning, Ready: true, ReadySince: t0, Restarts: 4, SidecarRestarts: 3,
				Created: t0, Namespace: "ns", Name: "e", UID: "uid-e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, facts(tc.pod)); diff != "" {
				t.Errorf("facts(%s) mismatch (-want +got):\n%s", tc.pod.Name, diff)
			}
		})
	}
}
