package podorder

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestCompare(t *testing.T) {
	base := Pod{Assigned: true, Phase: PhaseRunning, Ready: true, ReadySince: t0, Created: t0.Add(-time.Hour), Namespace: "ns", Name: "p", UID: "u"}
	with := func(f func(*Pod)) Pod { p := base; f(&p); return p }
	cases := []struct {
		name        string
		first, then Pod // first is removed before then
	}{
		{name: "unassigned first", first: with(func(p *Pod) { p.Assigned = false }), then: base},
		{name: "pending before unknown", first: with(func(p *Pod) { p.Phase = PhasePending }), then: with(func(p *Pod) { p.Phase = PhaseUnknown })},
		{name: "unknown before running", first: with(func(p *Pod) { p.Phase = PhaseUnknown }), then: base},
		{name: "unnamed phases rank as pending", first: with(func(p *Pod) { p.Phase = Phase(9) }), then: with(func(p *Pod) { p.Phase = PhaseUnknown })},
		{name: "not ready first", first: with(func(p *Pod) { p.Ready = false }), then: base},
		{name: "ready more recently first", first: with(func(p *Pod) { p.ReadySince = t0.Add(time.Second) }), then: base},
		{name: "zero ready time counts as most recent", first: with(func(p *Pod) { p.ReadySince = time.Time{} }), then: with(func(p *Pod) { p.ReadySince = t0.Add(time.Hour) })},
		{name: "ready time ignored when not ready", first: with(func(p *Pod) { p.Ready = false; p.Restarts = 1 }), then: with(func(p *Pod) { p.Ready = false; p.ReadySince = t0.Add(time.Hour) })},
		{name: "more restarts first", first: with(func(p *Pod) { p.Restarts = 2 }), then: with(func(p *Pod) { p.Restarts = 1; p.SidecarRestarts = 9 })},
		{name: "then more sidecar restarts", first: with(func(p *Pod) { p.SidecarRestarts = 2 }), then: base},
		{name: "newer first", first: with(func(p *Pod) { p.Created = t0 }), then: base},
		{name: "zero creation time counts as newest", first: with(func(p *Pod) { p.Created = time.Time{} }), then: with(func(p *Pod) { p.Created = t0.Add(time.Hour) })},
		{name: "nanoseconds count", first: with(func(p *Pod) { p.Created = base.Created.Add(time.Nanosecond) }), then: base},
		{name: "namespace breaks ties", first: with(func(p *Pod) { p.Namespace = "a" }), then: base},
		{name: "name breaks ties", first: with(func(p *Pod) { p.Name = "a" }), then: base},
		{name: "UID breaks ties", first: with(func(p *Pod) { p.UID = "a" }), then: base},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(&tc.first, &tc.then); got >= 0 {
				t.Errorf("Compare(first, then) = %d, want < 0", got)
			}
			if got := Compare(&tc.then, &tc.first); got <= 0 {
				t.Errorf("Compare(then, first) = %d, want > 0", got)
			}
		})
	}
	if got := Compare(&base, &base); got != 0 {
		t.Errorf("Compare(p, p) = %d, want 0", got)
	}
}

func randomFacts(r *rand.Rand, n int) []Pod {
	pods := make([]Pod, n)
	for i := range pods {
		pods[i] = Pod{
			Assigned:        r.IntN(4) > 0,
			Phase:           Phase(r.IntN(4)),
			Ready:           r.IntN(2) == 0,
			ReadySince:      t0.Add(time.Duration(r.IntN(5)) * time.Minute),
			Restarts:        int32(r.IntN(3)),
			SidecarRestarts: int32(r.IntN(2)),
			Created:         t0.Add(-time.Duration(r.IntN(5)) * time.Minute),
			Namespace:       "ns",
			Name:            fmt.Sprintf("p%d", i),
		}
	}
	return pods
}

func TestSortMatchesCompareAndIgnoresInputOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		pods := randomFacts(r, r.IntN(60))
		want := slices.Clone(pods)
		slices.SortFunc(want, func(a, b Pod) int { return Compare(&a, &b) })
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		SortFunc(pods, func(p Pod) Pod { return p })
		for i := range pods {
			if pods[i].Name != want[i].Name {
				t.Fatalf("Sort: position %d holds %s, want %s", i, pods[i].Name, want[i].Name)
			}
		}
	}
}

func TestCompareIsAStrictOrder(t *testing.T) {
	pods := randomFacts(rand.New(rand.NewPCG(3, 4)), 40)
	for i := range pods {
		for j := range pods {
			c, d := Compare(&pods[i], &pods[j]), Compare(&pods[j], &pods[i])
			if (c == 0) != (i == j) || (c < 0) != (d > 0) {
				t.Fatalf("Compare(%d, %d) = %d and Compare(%d, %d) = %d", i, j, c, j, i, d)
			}
		}
	}
}

func TestCompareDoesNotAllocate(t *testing.T) {
	a, b := Pod{Name: "a", Restarts: 1}, Pod{Name: "b", Restarts: 1}
	if n := testing.AllocsPerRun(100, func() { _ = Compare(&a, &b) }); n != 0 {
		t.Errorf("Compare allocates %v times, want 0", n)
	}
}

func BenchmarkSort(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := randomFacts(rand.New(rand.NewPCG(7, 8)), n)
			work := make([]Pod, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(work, pods)
				SortFunc(work, func(p Pod) Pod { return p })
			}
		})
	}
}

func BenchmarkCompare(b *testing.B) {
	x, y := Pod{Name: "a", Restarts: 1, Created: t0}, Pod{Name: "b", Restarts: 1, Created: t0}
	b.ReportAllocs()
	for b.Loop() {
		_ = Compare(&x, &y)
	}
}
