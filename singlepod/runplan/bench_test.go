package runplan_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/singlepod/runplan"
)

// benchPeers returns n runs of 10 job names, half pending, half triggered,
// every tenth with the run's dedupe key.
func benchPeers(n int) []runplan.Run {
	peers := make([]runplan.Run, n)
	for i := range peers {
		state := runplan.StatePending
		if i%2 == 1 {
			state = runplan.StateTriggered
		}
		peers[i] = peer(types.UID(fmt.Sprintf("peer-%06d", i)), fmt.Sprintf("job-%d", i%10), state, now.Add(-time.Duration(i)*time.Second))
		if i%10 == 0 {
			peers[i].DedupeKey = "pr-1"
			peers[i].JobName = "unit"
			peers[i].StartTime = now.Add(-2 * time.Hour)
		}
	}
	return peers
}

func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		peers := benchPeers(n)
		b.Run(fmt.Sprintf("triggered/peers=%d", n), func(b *testing.B) {
			in := input(aRun(runplan.StateTriggered, func(r *runplan.Run) { r.MaxConcurrency = n }), nil, peers...)
			in.Limits.MaxPending = n
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runplan.Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("pending-running/peers=%d", n), func(b *testing.B) {
			in := input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(time.Minute)), peers...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runplan.Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("pending-dedupe/peers=%d", n), func(b *testing.B) {
			in := input(aRun(runplan.StatePending, keyed("pr-1")), aPod(corev1.PodRunning, startedAgo(time.Minute)), peers...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runplan.Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDedupe(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		peers := benchPeers(n)
		run := aRun(runplan.StatePending, keyed("pr-1"))
		b.Run(fmt.Sprintf("peers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runplan.Deduplicate(run, peers, now)
			}
		})
	}
}

// TestComputeRunningDoesNotAllocate pins the hot path of a steady run: a
// pending run with a running pod and no dedupe key.
func TestComputeRunningDoesNotAllocate(t *testing.T) {
	in := input(aRun(runplan.StatePending), aPod(corev1.PodRunning, startedAgo(time.Minute)), benchPeers(100)...)
	if allocs := testing.AllocsPerRun(100, func() { _, _ = runplan.Compute(in) }); allocs != 0 {
		t.Errorf("Compute of a running pod allocates %v times, want 0", allocs)
	}
}
