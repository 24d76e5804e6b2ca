package indexes

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/jobkit/jobkit/owner"
	corev1 "k8s.io/api/core/v1"
)

var benchSizes = []int{10, 1000, 100000}

// BenchmarkStrays runs over n active pods: one per index, plus 1% duplicates and 1%
// without an index.
func BenchmarkStrays(b *testing.B) {
	for _, n := range benchSizes {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		pods := make([]*corev1.Pod, 0, n)
		for i := range n {
			ix := strconv.Itoa(i)
			switch r.IntN(100) {
			case 0:
				ix = strconv.Itoa(r.IntN(n))
			case 1:
				ix = ""
			}
			pods = append(pods, activePod("p"+strconv.Itoa(i), ix, time.Duration(r.IntN(60))*time.Minute))
		}
		r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Strays(owner.BatchJob, pods, n)
			}
		})
	}
}

func BenchmarkPodIndex(b *testing.B) {
	pod := activePod("p", "12345", time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = PodIndex(owner.BatchJob, pod)
	}
}
