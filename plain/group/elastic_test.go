package group_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/plain/group"
)

func TestSpecSurplus(t *testing.T) {
	spec := group.Spec{Name: "js", Roles: []group.Role{
		{Name: "leader", Replicas: 1, Parallelism: 1},
		{Name: "workers", Replicas: 2, Parallelism: 4},
	}}
	cases := []struct {
		name     string
		children []group.Child
		want     []int
	}{
		{name: "none beyond", children: []group.Child{running("a", "leader", 0), running("b", "workers", 0), running("c", "workers", 1)}},
		{name: "scaled down from 5: highest index first",
			children: []group.Child{running("w0", "workers", 0), running("w2", "workers", 2), running("w4", "workers", 4), running("w1", "workers", 1), running("w3", "workers", 3)},
			want:     []int{2, 4, 1}},
		{name: "finished and deleting children count too", children: []group.Child{
			succeeded("w3", "workers", 3), {Name: "w2", Role: "workers", Index: 2, Deleting: true}, failedChild("l1", "leader", 1, "BackoffLimitExceeded", "", 0),
		}, want: []int{0, 1, 2}},
		{name: "unknown roles are not the spec's", children: []group.Child{running("x", "evaluator", 7)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, spec.Surplus(tc.children))
		})
	}
}

func TestSpecResized(t *testing.T) {
	sized := func(name string, index, p int32, c *int32) group.Child {
		ch := running(name, "workers", index)
		ch.Parallelism, ch.Completions = p, c
		return ch
	}
	attempt := func(ch group.Child, a int32) group.Child { ch.Attempt = a; return ch }
	roles := func(p int32, c *int32, nonIndexed bool) group.Spec {
		return group.Spec{Name: "js", Roles: []group.Role{{Name: "workers", Replicas: 2, Parallelism: p, Completions: c, NonIndexed: nonIndexed}}}
	}
	cases := []struct {
		name     string
		spec     group.Spec
		children []group.Child
		c        group.Counters
		want     []int
	}{
		{name: "same size", spec: roles(4, ptr[int32](4), false), children: []group.Child{sized("w0", 0, 4, ptr[int32](4))}},
		{name: "grown: every running child", spec: roles(8, ptr[int32](8), false),
			children: []group.Child{sized("w0", 0, 4, ptr[int32](4)), sized("w1", 1, 4, ptr[int32](4))}, want: []int{0, 1}},
		{name: "completions only", spec: roles(4, ptr[int32](4), false), children: []group.Child{sized("w0", 0, 4, ptr[int32](6))}, want: []int{0}},
		{name: "completions not parallelism: nothing", spec: roles(4, ptr[int32](6), false), children: []group.Child{sized("w0", 0, 2, ptr[int32](2))}},
		{name: "completions unset: nothing", spec: roles(4, nil, false), children: []group.Child{sized("w0", 0, 2, nil)}},
		{name: "NonIndexed: nothing", spec: roles(4, ptr[int32](4), true), children: []group.Child{sized("w0", 0, 2, ptr[int32](2))}},
		{name: "finished, deleting, old and surplus children are left", spec: roles(4, ptr[int32](4), false), children: []group.Child{
			func() group.Child {
				ch := attempt(sized("w0", 0, 2, ptr[int32](2)), 1)
				ch.Outcome = group.Succeeded
				return ch
			}(),
			func() group.Child { ch := attempt(sized("w1", 1, 2, ptr[int32](2)), 1); ch.Deleting = true; return ch }(),
			sized("w1", 1, 2, ptr[int32](2)),
			attempt(sized("w2", 2, 2, ptr[int32](2)), 1),
			attempt(sized("w1", 1, 2, ptr[int32](2)), 1),
		}, c: group.Counters{Restarts: 1}, want: []int{4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.spec.Resized(tc.children, tc.c))
		})
	}
}

func TestValidateUpdateElastic(t *testing.T) {
	cases := []struct {
		name     string
		finished bool
		mutate   func(*group.Spec)
		want     []string
	}{
		{name: "an Indexed role grows", mutate: func(s *group.Spec) { s.Roles[1].Parallelism, s.Roles[1].Completions = 8, ptr[int32](8) }},
		{name: "and shrinks", mutate: func(s *group.Spec) { s.Roles[1].Parallelism, s.Roles[1].Completions = 2, ptr[int32](2) }},
		{name: "parallelism alone, completions unset", mutate: func(s *group.Spec) { s.Roles[0].Parallelism = 3 }},
		{name: "completions must follow parallelism", mutate: func(s *group.Spec) { s.Roles[1].Parallelism = 8 },
			want: []string{"replicatedJobs[1].template.spec.completions: Invalid value: completions must be equal to parallelism for Elastic Indexed Jobs"}},
		{name: "at least 1", mutate: func(s *group.Spec) { s.Roles[1].Parallelism, s.Roles[1].Completions = 0, ptr[int32](0) },
			want: []string{
				"replicatedJobs[1].template.spec.parallelism: Invalid value: parallelism must be >= 1",
				"replicatedJobs[1].template.spec.completions: Invalid value: completions must be >= 1",
			}},
		{name: "not once finished", finished: true, mutate: func(s *group.Spec) { s.Roles[1].Parallelism, s.Roles[1].Completions = 8, ptr[int32](8) },
			want: []string{"replicatedJobs[1].template.spec: Forbidden: Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)"}},
		{name: "a finished group unchanged is fine", finished: true, mutate: func(*group.Spec) {}},
		{name: "NonIndexed roles keep their size", mutate: func(s *group.Spec) { s.Roles[1].NonIndexed, s.Roles[1].Parallelism = true, 8 },
			want: []string{"replicatedJobs[1].template.spec.parallelism: Invalid value: field is immutable"}},
		{name: "replicas stay immutable, as in JobSet v0.12", mutate: func(s *group.Spec) { s.Roles[1].Replicas = 3 },
			want: []string{"replicatedJobs[1].replicas: Invalid value: field is immutable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validSpec()
			old.FailurePolicy, old.Coordinator = nil, nil
			if tc.name == "NonIndexed roles keep their size" {
				old.Roles[1].NonIndexed = true
			}
			old.Finished = tc.finished
			s := old
			s.Roles = append([]group.Role(nil), old.Roles...)
			tc.mutate(&s)
			var got []string
			for _, e := range group.ValidateUpdate(&old, &s) {
				got = append(got, e.Field+": "+string(e.Type)+": "+e.Detail)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
