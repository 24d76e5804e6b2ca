package podfailurepolicy_test

import (
	"fmt"
	"testing"

	pfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
)

// maximalPolicy has MaxRules rules, alternately 255 exit codes of container "main"
// and 20 condition patterns, none matching exit code 1 of "main" and the condition
// Ready=False; its last rule matches exit code 200 (as the Kubernetes face's
// BenchmarkMatch).
func maximalPolicy() *pfp.Policy {
	var rules []pfp.Rule
	for i := range pfp.MaxRules {
		if i%2 == 0 {
			values := make([]int32, 0, pfp.MaxExitCodeValues)
			for v := range int32(pfp.MaxExitCodeValues) {
				if v+2 != 200 || i == pfp.MaxRules-2 {
					values = append(values, v+2)
				}
			}
			rules = append(rules, exitRule(pfp.ActionFailIndex, pfp.OpIn, "main", values...))
			continue
		}
		ps := make([]pfp.Condition, pfp.MaxConditionPatterns)
		for j := range ps {
			ps[j] = pfp.Condition{Type: fmt.Sprintf("example.com/Condition-%d", j), Status: pfp.StatusFalse}
		}
		rules = append(rules, condRule(pfp.ActionIgnore, ps...))
	}
	return &pfp.Policy{Rules: rules}
}

func BenchmarkMatch(b *testing.B) {
	p := maximalPolicy()
	conds := []pfp.Condition{{Type: "Ready", Status: pfp.StatusFalse}, {Type: "DisruptionTarget", Status: pfp.StatusTrue}}
	for _, tc := range []struct {
		name string
		f    pfp.Failure
	}{
		{"rules=20/last-rule-matches", pfp.Failure{Containers: []pfp.Container{{Name: "main", ExitCode: 200}, {Name: "init", Init: true, ExitCode: 1}}, Conditions: conds}},
		{"rules=20/no-match", pfp.Failure{Containers: []pfp.Container{{Name: "main", ExitCode: 1}, {Name: "init", Init: true, ExitCode: 1}}, Conditions: conds}},
		{"rules=20/first-rule-matches", pfp.Failure{Containers: []pfp.Container{{Name: "main", ExitCode: 2}}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = pfp.Match(p, &tc.f)
			}
		})
	}
}

// BenchmarkMatchMany matches n failures against a small policy: the work of one
// sync of a job with n failed pods.
func BenchmarkMatchMany(b *testing.B) {
	p := &pfp.Policy{Rules: []pfp.Rule{
		condRule(pfp.ActionIgnore, pfp.Condition{Type: "DisruptionTarget"}),
		exitRule(pfp.ActionFailJob, pfp.OpIn, "task", 42),
	}}
	for _, n := range []int{10, 1000, 100000} {
		fs := make([]pfp.Failure, n)
		for i := range fs {
			fs[i] = pfp.Failure{Containers: []pfp.Container{{Name: "task", ExitCode: int32(i%50 + 1)}}}
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range fs {
					_ = pfp.Match(p, &fs[i])
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	p := maximalPolicy()
	ctx := pfp.Context{HasContainer: func(n string) bool { return n == "main" }, PerIndexBackoff: true}
	if errs := pfp.Validate(p, ctx); len(errs) != 0 {
		b.Fatal(errs)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = pfp.Validate(p, ctx)
	}
}
