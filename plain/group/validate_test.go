package group_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/jobkit/jobkit/plain/group"
)

func validSpec() group.Spec {
	return group.Spec{
		Name: "js",
		Roles: []group.Role{
			{Name: "leader", Replicas: 1, Parallelism: 1},
			{Name: "workers", Replicas: 2, Parallelism: 4, Completions: ptr[int32](4), DependsOn: []group.Dependency{{Name: "leader", Status: group.DependsOnReady}}},
		},
		SuccessPolicy: &group.SuccessPolicy{Operator: group.Any, TargetReplicatedJobs: []string{"leader"}},
		FailurePolicy: &group.FailurePolicy{MaxRestarts: 3, RestartStrategy: group.BlockingRecreate, Rules: []group.Rule{
			{Name: "pfp", Action: group.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}, OnJobFailureMessagePatterns: []string{"exit code 42"}, TargetReplicatedJobs: []string{"workers"}},
			{Action: group.RestartJob},
		}},
		Coordinator:             &group.Coordinator{ReplicatedJob: "workers", JobIndex: 1, PodIndex: 3},
		TTLSecondsAfterFinished: ptr[int32](0),
		ManagedBy:               "example.com/jobset",
	}
}

type fieldWant struct {
	field string
	typ   string
	value any
}

// The cases follow jobset-behaviour.md, "Fields (v1alpha2)": names, ranges,
// enumerations and the webhook's cross-field rules.
func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*group.Spec)
		want   []fieldWant
	}{
		{name: "valid", mutate: func(*group.Spec) {}},
		{name: "no roles", mutate: func(s *group.Spec) { s.Roles = nil; s.SuccessPolicy = nil; s.FailurePolicy = nil; s.Coordinator = nil },
			want: []fieldWant{{"replicatedJobs", "Required value", nil}}},
		{name: "duplicate role and negative counts", mutate: func(s *group.Spec) {
			s.Roles = append(s.Roles, group.Role{Name: "leader", Replicas: -1, Parallelism: -2, Completions: ptr[int32](-3)})
		}, want: []fieldWant{
			{"replicatedJobs[2].replicas", "Invalid value", int32(-1)},
			{"replicatedJobs[2].template.spec.parallelism", "Invalid value", int32(-2)},
			{"replicatedJobs[2].template.spec.completions", "Invalid value", int32(-3)},
			{"replicatedJobs[2].name", "Duplicate value", "leader"},
		}},
		{name: "child name not a DNS-1035 label", mutate: func(s *group.Spec) { s.Roles[0].Name = "Leader_1" },
			want: []fieldWant{
				{"replicatedJobs[0].name", "Invalid value", "js-Leader_1-0"},
				{"replicatedJobs[1].dependsOn[0].name", "Invalid value", "leader"},
				{"successPolicy.targetReplicatedJobs[0]", "Invalid value", "leader"},
			}},
		{name: "pod hostname too long", mutate: func(s *group.Spec) { s.Roles[1].Name = strings.Repeat("w", 57) },
			want: []fieldWant{
				{"replicatedJobs[1].name", "Invalid value", "js-" + strings.Repeat("w", 57) + "-1-3-abcde"},
				{"failurePolicy.rules[0].targetReplicatedJobs[0]", "Invalid value", "workers"},
				{"coordinator.replicatedJob", "Invalid value", "workers"},
			}},
		{name: "no group name: reported once, not as bad child names", mutate: func(s *group.Spec) { s.Name = "" },
			want: []fieldWant{{"metadata.name", "Required value", nil}}},
		{name: "bad group name", mutate: func(s *group.Spec) { s.Roles[0].GroupName = "a b" },
			want: []fieldWant{{"replicatedJobs[0].groupName", "Invalid value", "a b"}}},
		{name: "dependsOn: on the first role, unknown, later, duplicate, bad status, too many", mutate: func(s *group.Spec) {
			s.Roles[0].DependsOn = []group.Dependency{{Name: "workers", Status: group.DependsOnReady}}
			s.Roles[1].DependsOn = []group.Dependency{{Name: "leader", Status: "Done"}, {Name: "leader", Status: group.DependsOnComplete},
				{Name: "a", Status: "Ready"}, {Name: "b", Status: "Ready"}, {Name: "c", Status: "Ready"}, {Name: "d", Status: "Ready"}}
		}, want: []fieldWant{
			{"replicatedJobs[0].dependsOn", "Invalid value", nil},
			{"replicatedJobs[0].dependsOn[0].name", "Invalid value", "workers"},
			{"replicatedJobs[1].dependsOn", "Too many", 6},
			{"replicatedJobs[1].dependsOn[0].status", "Unsupported value", group.DependsOnStatus("Done")},
			{"replicatedJobs[1].dependsOn[1].name", "Duplicate value", "leader"},
			{"replicatedJobs[1].dependsOn[2].name", "Invalid value", "a"},
			{"replicatedJobs[1].dependsOn[3].name", "Invalid value", "b"},
			{"replicatedJobs[1].dependsOn[4].name", "Invalid value", "c"},
			{"replicatedJobs[1].dependsOn[5].name", "Invalid value", "d"},
		}},
		{name: "InOrder with dependsOn", mutate: func(s *group.Spec) { s.StartupOrder = group.InOrder },
			want: []fieldWant{{"startupPolicy.startupPolicyOrder", "Invalid value", group.InOrder}}},
		{name: "unknown startup order and operator", mutate: func(s *group.Spec) { s.StartupOrder = "Random"; s.SuccessPolicy.Operator = "Most" },
			want: []fieldWant{
				{"successPolicy.operator", "Unsupported value", group.Operator("Most")},
				{"startupPolicy.startupPolicyOrder", "Unsupported value", group.StartupOrder("Random")},
			}},
		{name: "failure policy fields", mutate: func(s *group.Spec) {
			s.FailurePolicy.MaxRestarts = -1
			s.FailurePolicy.RestartStrategy = "Gently"
			s.FailurePolicy.Rules = []group.Rule{
				{Name: "9lives", Action: "Retry", OnJobFailureReasons: []string{"OOM", "PodFailurePolicy", "PodFailurePolicy"}},
				{Name: strings.Repeat("r", 129), OnJobFailureMessagePatterns: []string{"a(b", "x", "x"}, TargetReplicatedJobs: []string{"nobody"}},
				{Name: "failurePolicyRule3", Action: group.FailJobSet},
				{Action: group.FailJobSet},
			}
		}, want: []fieldWant{
			{"failurePolicy.maxRestarts", "Invalid value", int32(-1)},
			{"failurePolicy.restartStrategy", "Unsupported value", group.RestartStrategy("Gently")},
			{"failurePolicy.rules[0].name", "Invalid value", "9lives"},
			{"failurePolicy.rules[0].action", "Unsupported value", group.Action("Retry")},
			{"failurePolicy.rules[0].onJobFailureReasons[0]", "Invalid value", "OOM"},
			{"failurePolicy.rules[0].onJobFailureReasons[2]", "Duplicate value", "PodFailurePolicy"},
			{"failurePolicy.rules[1].name", "Invalid value", strings.Repeat("r", 129)},
			{"failurePolicy.rules[1].action", "Required value", nil},
			{"failurePolicy.rules[1].onJobFailureMessagePatterns[0]", "Invalid value", "a(b"},
			{"failurePolicy.rules[1].onJobFailureMessagePatterns[2]", "Duplicate value", "x"},
			{"failurePolicy.rules[1].targetReplicatedJobs[0]", "Invalid value", "nobody"},
			{"failurePolicy.rules[3].name", "Invalid value", "failurePolicyRule3"},
		}},
		{name: "coordinator out of its role", mutate: func(s *group.Spec) {
			s.Coordinator = &group.Coordinator{ReplicatedJob: "workers", JobIndex: 2, PodIndex: -1}
		},
			want: []fieldWant{
				{"coordinator.jobIndex", "Invalid value", int32(2)},
			}},
		{name: "ttl, subdomain, managedBy", mutate: func(s *group.Spec) {
			s.TTLSecondsAfterFinished = ptr[int32](-5)
			s.Subdomain = "No.Dots"
			s.ManagedBy = "no-slash"
		}, want: []fieldWant{
			{"ttlSecondsAfterFinished", "Invalid value", int32(-5)},
			{"network.subdomain", "Invalid value", "No.Dots"},
			{"network.subdomain", "Invalid value", "No.Dots"},
			{"managedBy", "Invalid value", "no-slash"},
		}},
		{name: "subdomain must start with a letter (a DNS-1035 label)", mutate: func(s *group.Spec) { s.Subdomain = "1net" },
			want: []fieldWant{{"network.subdomain", "Invalid value", "1net"}}},
		{name: "replicas × parallelism beyond int32", mutate: func(s *group.Spec) { s.Roles[1].Replicas = 1 << 30; s.Coordinator = nil; s.FailurePolicy = nil }, // names stay short enough
			want: []fieldWant{{"replicatedJobs[1].replicas", "Invalid value", int32(1 << 30)}}},
		{name: "managedBy too long", mutate: func(s *group.Spec) { s.ManagedBy = "example.com/" + strings.Repeat("a", 60) },
			want: []fieldWant{{"managedBy", "Too long", "example.com/" + strings.Repeat("a", 60)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(&s)
			errs := group.Validate(&s)
			var got []fieldWant
			for _, e := range errs {
				got = append(got, fieldWant{e.Field, string(e.Type), e.BadValue})
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(fieldWant{})); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			if len(tc.want) > 0 {
				require.Error(t, errs)
				assert.True(t, errors.Is(errs, group.ErrInvalid), "errors.Is(errs, ErrInvalid)")
				assert.Contains(t, errs.Error(), "group: "+tc.want[0].field)
			}
		})
	}
}

func TestValidateCompileAgree(t *testing.T) {
	s := validSpec()
	s.FailurePolicy.Rules[0].OnJobFailureMessagePatterns = []string{"[z-a]"}
	assert.NotEmpty(t, group.Validate(&s))
	_, err := group.Compile(s.FailurePolicy)
	assert.Error(t, err, "Compile rejects what Validate rejects")
}

func TestDefault(t *testing.T) {
	in := group.Spec{
		Name:          "js",
		Roles:         []group.Role{{Name: "a", Replicas: 1}, {Name: "b", GroupName: "g", Replicas: 1}},
		SuccessPolicy: &group.SuccessPolicy{TargetReplicatedJobs: []string{"a"}},
		FailurePolicy: &group.FailurePolicy{Rules: []group.Rule{{Action: group.FailJobSet}, {Name: "mine", Action: group.RestartJob}}},
	}
	before := in
	before.Roles = append([]group.Role(nil), in.Roles...)
	got := group.Default(in)
	want := group.Spec{
		Name:          "js",
		Roles:         []group.Role{{Name: "a", GroupName: "default", Replicas: 1}, {Name: "b", GroupName: "g", Replicas: 1}},
		SuccessPolicy: &group.SuccessPolicy{Operator: group.All, TargetReplicatedJobs: []string{"a"}},
		FailurePolicy: &group.FailurePolicy{RestartStrategy: group.Recreate, Rules: []group.Rule{
			{Name: "failurePolicyRule0", Action: group.FailJobSet}, {Name: "mine", Action: group.RestartJob}}},
		StartupOrder: group.AnyOrder,
		Subdomain:    "js",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default (-want +got):\n%s", diff)
	}
	assert.Equal(t, before.Roles, in.Roles, "Default modified its roles")
	assert.Empty(t, in.SuccessPolicy.Operator, "Default modified the success policy")
	assert.Empty(t, in.FailurePolicy.Rules[0].Name, "Default modified the rules")
	assert.Empty(t, group.Validate(&got))

	nilPolicies := group.Default(group.Spec{Name: "x"})
	assert.Equal(t, &group.SuccessPolicy{Operator: group.All}, nilPolicies.SuccessPolicy)
	assert.Nil(t, nilPolicies.FailurePolicy)
}

func TestValidateUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*group.Spec)
		want   []string
	}{
		{name: "no change", mutate: func(*group.Spec) {}},
		{name: "the TTL may change", mutate: func(s *group.Spec) { s.TTLSecondsAfterFinished = ptr[int32](60) }},
		{name: "filling a default is no change", mutate: func(s *group.Spec) {
			s.Roles[0].GroupName = "default"
			s.StartupOrder = group.AnyOrder
			s.Subdomain = "js"
		}},
		{name: "replicas, dependsOn and policies are immutable", mutate: func(s *group.Spec) {
			s.Roles[1].Replicas = 5
			s.Roles[1].DependsOn = []group.Dependency{{Name: "leader", Status: group.DependsOnComplete}}
			s.FailurePolicy = &group.FailurePolicy{MaxRestarts: 9}
			s.SuccessPolicy = nil
			s.ManagedBy = "example.com/other"
		}, want: []string{"replicatedJobs[1].replicas: field is immutable", "replicatedJobs[1].dependsOn: Value is immutable",
			"successPolicy: Value is immutable", "failurePolicy: Value is immutable", "managedBy: field is immutable"}},
		{name: "roles cannot be added", mutate: func(s *group.Spec) {
			s.Roles = append(s.Roles, group.Role{Name: "eval", Replicas: 1, Parallelism: 1})
		}, want: []string{"replicatedJobs: field is immutable"}},
		{name: "the new spec is validated too", mutate: func(s *group.Spec) { s.TTLSecondsAfterFinished = ptr[int32](-1) },
			want: []string{"ttlSecondsAfterFinished: must be greater than or equal to 0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, s := validSpec(), validSpec()
			tc.mutate(&s)
			var got []string
			for _, e := range group.ValidateUpdate(&old, &s) {
				got = append(got, e.Field+": "+e.Detail)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestSpecHandledBy(t *testing.T) {
	tests := []struct {
		managedBy, controller string
		want                  bool
	}{
		{managedBy: "", controller: group.ControllerName, want: true},
		{managedBy: "", controller: "example.com/mine", want: false},
		{managedBy: "example.com/mine", controller: "example.com/mine", want: true},
		{managedBy: "example.com/mine", controller: group.ControllerName, want: false},
	}
	for _, tc := range tests {
		s := group.Spec{ManagedBy: tc.managedBy}
		if got := s.HandledBy(tc.controller); got != tc.want {
			t.Errorf("Spec{ManagedBy: %q}.HandledBy(%q) = %v, want %v", tc.managedBy, tc.controller, got, tc.want)
		}
	}
}
