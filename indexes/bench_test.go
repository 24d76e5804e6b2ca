package indexes

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

var benchSizes = []int{10, 1000, 100000}

// alternating returns the even indexes below n: n/2 intervals of one index, the worst
// case for interval lists.
func alternating(n, offset int) Intervals {
	out := make(Intervals, 0, n/2+1)
	for x := offset; x < n; x += 2 {
		out = append(out, Interval{First: x, Last: x})
	}
	return out
}

func BenchmarkParse(b *testing.B) {
	for _, n := range benchSizes {
		s := alternating(n, 0).String()
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if _, err := Parse(s, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	for _, n := range benchSizes {
		set := alternating(n, 0)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = set.String()
			}
		})
	}
}

func BenchmarkUnion(b *testing.B) {
	for _, n := range benchSizes {
		even, odd := alternating(n, 0), alternating(n, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = even.Union(odd)
			}
		})
	}
}

// BenchmarkFirstPending asks for every pending index of a job whose even indexes
// succeeded and whose first tenth is active.
func BenchmarkFirstPending(b *testing.B) {
	for _, n := range benchSizes {
		succeeded := alternating(n, 0)
		active := Intervals{{First: 0, Last: max(n/10-1, 0)}}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = FirstPending(n, n, succeeded, nil, active)
			}
		})
	}
}

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
				_ = Strays(pods, n)
			}
		})
	}
}

func BenchmarkPodIndex(b *testing.B) {
	pod := activePod("p", "12345", time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = PodIndex(pod)
	}
}
