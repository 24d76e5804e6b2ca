package podorder

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func BenchmarkSort(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := randomPods(rand.New(rand.NewPCG(7, 8)), n)
			work := make([]*corev1.Pod, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(work, pods)
				Sort(work)
			}
		})
	}
}

// BenchmarkSortFuncCompare is the baseline that Sort's precomputed keys improve on.
func BenchmarkSortFuncCompare(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pods := randomPods(rand.New(rand.NewPCG(7, 8)), n)
			work := make([]*corev1.Pod, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(work, pods)
				slices.SortFunc(work, Compare)
			}
		})
	}
}

func BenchmarkCompare(b *testing.B) {
	x := newPod("a", restarts(1, 2), initContainer("s", true, 1))
	y := newPod("b", restarts(1, 2), initContainer("s", true, 1))
	b.ReportAllocs()
	for b.Loop() {
		_ = Compare(x, y)
	}
}
