package successpolicy_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/successpolicy"
)

// maxSucceededIndexesLength is the API server's limit on a succeededIndexes string.
const maxSucceededIndexesLength = 64 * 1024

var benchSizes = []int{10, 1000, 100_000}

// worstPolicy returns 20 rules over an Indexed Job of 2n completions with n succeeded
// indexes 0, 2, 4, ...: nineteen that fail (all of 0..2n-1; n+1 of them; n+1 in all)
// and a last one that matches (n in all). The middle kind has to scan almost every
// succeeded interval before it can give up.
func worstPolicy(n int) *batchv1.SuccessPolicy {
	all := "0-" + strconv.Itoa(2*n-1)
	rules := make([]batchv1.SuccessPolicyRule, 0, 20)
	for i := range 19 {
		switch i % 3 {
		case 0:
			rules = append(rules, batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(all)})
		case 1:
			rules = append(rules, batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(all), SucceededCount: ptr.To(int32(n + 1))})
		default:
			rules = append(rules, batchv1.SuccessPolicyRule{SucceededCount: ptr.To(int32(n + 1))})
		}
	}
	rules = append(rules, batchv1.SuccessPolicyRule{SucceededCount: ptr.To(int32(n))})
	return &batchv1.SuccessPolicy{Rules: rules}
}

func BenchmarkCompiledMatch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			c, err := successpolicy.Compile(worstPolicy(n), 2*n)
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

// BenchmarkCompiledMatchListed matches one rule listing n alternating indexes, all of
// which succeeded: one binary search per listed interval.
func BenchmarkCompiledMatchListed(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			listed := alternating(n).String()
			p := &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To(listed)}}}
			// Past 64 KiB (the largest size) Compile reports the list as too long, as
			// Validate does, and still matches with it.
			c, err := successpolicy.Compile(p, 2*n)
			if err != nil && len(listed) <= maxSucceededIndexesLength {
				b.Fatal(err)
			}
			succeeded := alternating(n)
			b.ReportAllocs()
			for b.Loop() {
				if r := c.Match(succeeded); !r.Matched {
					b.Fatalf("Match() = %+v, want a match", r)
				}
			}
		})
	}
}

// BenchmarkMatch is the one-call form, which compiles the policy every time.
func BenchmarkMatch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			p := worstPolicy(n)
			succeeded := alternating(n)
			b.ReportAllocs()
			for b.Loop() {
				match(p, 2*n, succeeded)
			}
		})
	}
}

// BenchmarkCompile compiles a 20-rule policy whose rules each list n alternating
// indexes (past 64 KiB for the largest size, which Compile reports as Validate does,
// after compiling it).
func BenchmarkCompile(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			listed := alternating(n).String()
			rules := make([]batchv1.SuccessPolicyRule, 20)
			for i := range rules {
				rules[i] = batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(listed)}
			}
			p := &batchv1.SuccessPolicy{Rules: rules}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := successpolicy.Compile(p, 2*n); err != nil && len(listed) <= maxSucceededIndexesLength {
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
			parts := make([]string, n)
			for i := range parts {
				parts[i] = strconv.Itoa(2 * i)
			}
			listed := strings.Join(parts, ",")
			rules := make([]batchv1.SuccessPolicyRule, 20)
			for i := range rules {
				rules[i] = batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(listed), SucceededCount: ptr.To(int32(n))}
			}
			spec := indexedSpec(int32(2*n), &batchv1.SuccessPolicy{Rules: rules})
			b.ReportAllocs()
			for b.Loop() {
				successpolicy.Validate(spec, nil)
			}
		})
	}
}
