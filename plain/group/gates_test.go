package group_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/plain/group"
)

// inPlaceSpec is validSpec under restartStrategy InPlaceRestart, its roles
// meeting the in-place template rules, and no per-child restart rule.
func inPlaceSpec() group.Spec {
	s := validSpec()
	s.FailurePolicy = &group.FailurePolicy{MaxRestarts: 3, RestartStrategy: group.InPlaceRestart}
	for i := range s.Roles {
		r := &s.Roles[i]
		r.BackoffLimit, r.PodReplacementPolicy, r.Completions = ptr[int32](math.MaxInt32), "Failed", ptr(r.Parallelism)
	}
	return s
}

// JobSet v0.12's webhook refuses, on create, the alpha fields whose gate is
// off, in its words: restartStrategy InPlaceRestart (gate InPlaceRestart) and
// the per-child restart actions (gate RestartJob). A gate absent or on allows
// its field; the in-place template rules and the 1024 replicas of a
// per-child action are checked only with their gate on (or absent).
func TestValidateFeatureGates(t *testing.T) {
	const (
		inPlaceOff    = "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled"
		restartJobOff = "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob feature gate is disabled"
	)
	perChild := func(s *group.Spec) {
		s.FailurePolicy.Rules = []group.Rule{{Name: "a", Action: group.FailJobSet},
			{Name: "b", Action: group.RestartJobAndIgnoreMaxRestarts}, {Name: "c", Action: group.RestartJob}}
	}
	cases := []struct {
		name   string
		spec   func() group.Spec
		gates  map[string]bool
		mutate func(*group.Spec)
		want   []fieldWant
		detail []string
	}{
		{name: "in place, no gates", spec: inPlaceSpec},
		{name: "in place, gate on", spec: inPlaceSpec, gates: map[string]bool{"InPlaceRestart": true}},
		{name: "in place, other gates only", spec: inPlaceSpec, gates: map[string]bool{"RestartJob": false}},
		{name: "in place, gate off", spec: inPlaceSpec, gates: map[string]bool{"InPlaceRestart": false},
			want:   []fieldWant{{"failurePolicy.restartStrategy", "Invalid value", group.InPlaceRestart}},
			detail: []string{inPlaceOff}},
		{name: "in place, gate off: the template rules are not checked", spec: inPlaceSpec, gates: map[string]bool{"InPlaceRestart": false},
			mutate: func(s *group.Spec) { s.Roles[0].BackoffLimit = nil },
			want:   []fieldWant{{"failurePolicy.restartStrategy", "Invalid value", group.InPlaceRestart}},
			detail: []string{inPlaceOff}},
		{name: "in place, gate on: the template rules are checked", spec: inPlaceSpec, gates: map[string]bool{"InPlaceRestart": true},
			mutate: func(s *group.Spec) { s.Roles[0].BackoffLimit = nil },
			want:   []fieldWant{{"replicatedJobs[0].template.spec.backoffLimit", "Invalid value", nil}},
			detail: []string{"replicatedJob leader: must be set to 2147483647 (MaxInt32) when in-place restart is enabled"}},
		{name: "recreate, gate off", spec: validSpec, gates: map[string]bool{"InPlaceRestart": false, "RestartJob": true}},
		{name: "per-child actions, gate on", spec: inPlaceSpec, gates: map[string]bool{"RestartJob": true}, mutate: perChild},
		{name: "per-child actions, gate off: said once, at the first", spec: inPlaceSpec, gates: map[string]bool{"RestartJob": false}, mutate: perChild,
			want:   []fieldWant{{"failurePolicy.rules[1].action", "Invalid value", group.RestartJobAndIgnoreMaxRestarts}},
			detail: []string{restartJobOff}},
		{name: "per-child actions, gate off: no replicas check", spec: inPlaceSpec, gates: map[string]bool{"RestartJob": false},
			mutate: func(s *group.Spec) { perChild(s); s.Roles[0].Replicas = 2000; s.Coordinator = nil },
			want:   []fieldWant{{"failurePolicy.rules[1].action", "Invalid value", group.RestartJobAndIgnoreMaxRestarts}},
			detail: []string{restartJobOff}},
		{name: "both off", spec: inPlaceSpec, gates: map[string]bool{"InPlaceRestart": false, "RestartJob": false}, mutate: perChild,
			want: []fieldWant{{"failurePolicy.restartStrategy", "Invalid value", group.InPlaceRestart},
				{"failurePolicy.rules[1].action", "Invalid value", group.RestartJobAndIgnoreMaxRestarts}},
			detail: []string{inPlaceOff, restartJobOff}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec()
			s.FeatureGates = tc.gates
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			errs := group.Validate(&s)
			var got []fieldWant
			var detail []string
			for _, e := range errs {
				got = append(got, fieldWant{e.Field, string(e.Type), e.BadValue})
				detail = append(detail, e.Detail)
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.detail, detail)
		})
	}
}

// Under JobSet's gate ElasticJobSet off, an Indexed role's parallelism and
// completions are immutable, as a NonIndexed role's are; the create-time
// gates are not checked on update (the policy that names the feature
// cannot change, and JobSet checks them on create only).
func TestValidateUpdateFeatureGates(t *testing.T) {
	resize := func(s *group.Spec) { s.Roles[1].Parallelism, s.Roles[1].Completions = 6, ptr[int32](6) }
	cases := []struct {
		name   string
		gates  map[string]bool
		mutate func(*group.Spec)
		want   []string
	}{
		{name: "resize, no gates", mutate: resize},
		{name: "resize, gate on", gates: map[string]bool{"ElasticJobSet": true}, mutate: resize},
		{name: "resize, gate off", gates: map[string]bool{"ElasticJobSet": false}, mutate: resize,
			want: []string{"replicatedJobs[1].template.spec.parallelism: field is immutable", "replicatedJobs[1].template.spec.completions: field is immutable"}},
		{name: "no resize, gate off", gates: map[string]bool{"ElasticJobSet": false}, mutate: func(s *group.Spec) { s.TTLSecondsAfterFinished = ptr[int32](9) }},
		{name: "in place kept, its gate off", gates: map[string]bool{"InPlaceRestart": false, "RestartJob": false},
			mutate: func(s *group.Spec) { s.TTLSecondsAfterFinished = ptr[int32](9) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, s := inPlaceSpec(), inPlaceSpec()
			s.FailurePolicy.Rules = []group.Rule{{Name: "c", Action: group.RestartJob}}
			old.FailurePolicy = &group.FailurePolicy{MaxRestarts: 3, RestartStrategy: group.InPlaceRestart, Rules: s.FailurePolicy.Rules}
			s.FeatureGates = tc.gates
			tc.mutate(&s)
			var got []string
			for _, e := range group.ValidateUpdate(&old, &s) {
				got = append(got, e.Field+": "+e.Detail)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
