package indexes

import (
	"fmt"
	"math/rand/v2"
	"testing"
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

// BenchmarkStrays runs over n active tasks: one per index, plus 1% duplicates and 1%
// without an index, in random order; ties are broken by position.
func BenchmarkStrays(b *testing.B) {
	for _, n := range benchSizes {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		index := make([]int, n)
		for i := range index {
			index[i] = i
			switch r.IntN(100) {
			case 0:
				index[i] = r.IntN(n)
			case 1:
				index[i] = Unknown
			}
		}
		r.Shuffle(n, func(i, j int) { index[i], index[j] = index[j], index[i] })
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Strays(index, n, func(i, j int) int { return i - j })
			}
		})
	}
}

// BenchmarkOutcomesRecord adds n/2 succeeded and n/4 failed indexes, in random order,
// to a job whose status holds every fourth index as succeeded.
func BenchmarkOutcomesRecord(b *testing.B) {
	for _, n := range benchSizes {
		r := rand.New(rand.NewPCG(2, uint64(n)))
		prev := Outcomes{Succeeded: alternating(n/2, 0)}
		succeeded := r.Perm(n)[:n/2]
		failed := r.Perm(n)[:n/4]
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = prev.Record(n, succeeded, failed)
			}
		})
	}
}
