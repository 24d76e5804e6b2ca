package successpolicy_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/jobkit/jobkit/plain/indexes"
	sp "github.com/jobkit/jobkit/plain/successpolicy"
)

var benchSizes = []int{10, 1000, 100_000}

// alternating returns n single-index intervals 0, 2, 4, ..., the worst shape of n
// succeeded indexes.
func alternating(n int) indexes.Intervals {
	ivs := make(indexes.Intervals, n)
	for i := range ivs {
		ivs[i] = indexes.Interval{First: 2 * i, Last: 2 * i}
	}
	return ivs
}

// worstPolicy is the Kubernetes face's worstPolicy over plain rules: 20 rules over
// 2n completions with n succeeded indexes 0, 2, 4, ...; only the last one matches.
func worstPolicy(n int) *sp.Policy {
	all := "0-" + strconv.Itoa(2*n-1)
	rules := make([]sp.Rule, 0, 20)
	for i := range 19 {
		switch i % 3 {
		case 0:
			rules = append(rules, sp.Rule{SucceededIndexes: &all})
		case 1:
			rules = append(rules, sp.Rule{SucceededIndexes: &all, SucceededCount: count(int32(n + 1))})
		default:
			rules = append(rules, sp.Rule{SucceededCount: count(int32(n + 1))})
		}
	}
	rules = append(rules, sp.Rule{SucceededCount: count(int32(n))})
	return &sp.Policy{Rules: rules}
}

func BenchmarkCompiledMatch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c, err := sp.Compile(worstPolicy(n), 2*n)
			if err != nil {
				b.Fatal(err)
			}
			succeeded := alternating(n)
			b.ReportAllocs()
			for b.Loop() {
				if r := c.Match(succeeded); r.RuleIndex != 19 {
					b.Fatalf("Match() = %+v, want rule 19", r)
				}
			}
		})
	}
}

// BenchmarkCompile compiles (and so validates) a 20-rule policy whose rules each
// list n alternating indexes; past 64 KiB, the largest size is rejected as too long
// after compiling.
func BenchmarkCompile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			listed := alternating(n).String()
			rules := make([]sp.Rule, 20)
			for i := range rules {
				rules[i] = sp.Rule{SucceededIndexes: &listed}
			}
			p := &sp.Policy{Rules: rules}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sp.Compile(p, 2*n); err != nil && len(listed) <= maxSucceededIndexesLength {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidate validates a 20-rule policy whose rules each list n alternating
// indexes.
func BenchmarkValidate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			listed := alternating(n).String()
			rules := make([]sp.Rule, 20)
			for i := range rules {
				rules[i] = sp.Rule{SucceededIndexes: &listed, SucceededCount: count(int32(n))}
			}
			p := &sp.Policy{Rules: rules}
			b.ReportAllocs()
			for b.Loop() {
				sp.Validate(p, 2*n)
			}
		})
	}
}
