package controllertest_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	controllertest "github.com/jobkit/jobkit/examples/jobset/upstream/suite"
)

func ExampleSummary() {
	controllertest.Summary(os.Stdout, []controllertest.Outcome{
		{Name: "JobSet controller succeeds from first run", State: "passed", Duration: 1200 * time.Millisecond},
		{Name: "JobSet controller with VolumeClaimPolicies", State: "skipped", Reason: "not covered\nsecond line"},
		{Name: "JobSet controller resume", State: "failed", Reason: "Timed out after 10s", Duration: 10 * time.Second},
	})
	// Output:
	// FAILED   10.0s JobSet controller resume
	//         reason: Timed out after 10s
	// SKIPPED   0.0s JobSet controller with VolumeClaimPolicies
	//         reason: not covered
	// PASSED    1.2s JobSet controller succeeds from first run
	// JobSet's integration suite against jobkit: 1 passed, 1 failed, 1 skipped
}

func TestSummaryCounts(t *testing.T) {
	tests := []struct {
		name   string
		states []string
		want   controllertest.Counts
	}{
		{name: "none", want: controllertest.Counts{}},
		{name: "mixed", states: []string{"passed", "failed", "skipped", "passed"}, want: controllertest.Counts{Passed: 2, Failed: 1, Skipped: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var outcomes []controllertest.Outcome
			for _, s := range tt.states {
				outcomes = append(outcomes, controllertest.Outcome{Name: s, State: s})
			}
			var b strings.Builder
			assert.Equal(t, tt.want, controllertest.Summary(&b, outcomes))
		})
	}
}

func TestSkipReason(t *testing.T) {
	tests := []struct {
		name, spec string
		wantSkip   bool
	}{
		{name: "coordinator of a role without completions", spec: "JobSet controller jobset with coordinator set should have the coordinator label", wantSkip: true},
		{name: "volume claims of a suspended JobSet, which run", spec: "JobSet controller suspended jobset with VolumeClaimPolicies should create PVCs"},
		{name: "the racing volume claims spec", spec: "JobSet controller jobset with VolumeClaimPolicies should create two PVC with Delete and Retain policies", wantSkip: true},
		{name: "a behaviour that passes", spec: "JobSet controller jobset should succeed after all jobs succeed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, ok := controllertest.SkipReason(tt.spec)
			assert.Equal(t, tt.wantSkip, ok, "SkipReason(%q) = %q, %t", tt.spec, reason, ok)
			assert.Equal(t, tt.wantSkip, reason != "")
		})
	}
	for _, s := range controllertest.Skipped {
		assert.NotEmpty(t, s.Reason, "Skipped %q has no reason", s.Part)
	}
}
