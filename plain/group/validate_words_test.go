package group_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobkit/jobkit/plain/group"
)

// The checks JobSet's webhook makes that issue 34 listed as missing, and the
// words of its messages: each case gives every error's field and Detail.
func TestValidateWords(t *testing.T) {
	dns1035 := "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
	type fd struct{ field, detail string }
	inPlace := func(s *group.Spec) {
		s.FailurePolicy.RestartStrategy = group.InPlaceRestart
		for i := range s.Roles {
			s.Roles[i].BackoffLimit = ptr[int32](math.MaxInt32)
			s.Roles[i].PodReplacementPolicy = "Failed"
			s.Roles[i].Completions = ptr(s.Roles[i].Parallelism)
		}
	}
	cases := []struct {
		name   string
		mutate func(*group.Spec)
		want   []fd
	}{
		{name: "coordinator in a NonIndexed role", mutate: func(s *group.Spec) { s.Roles[1].NonIndexed = true },
			want: []fd{{"coordinator.replicatedJob", "job for coordinator pod must be indexed completion mode, and completions number must be set"}}},
		{name: "coordinator in a role without completions", mutate: func(s *group.Spec) { s.Roles[1].Completions = nil },
			want: []fd{{"coordinator.replicatedJob", "job for coordinator pod must be indexed completion mode, and completions number must be set"}}},
		{name: "coordinator: the first error only", mutate: func(s *group.Spec) {
			s.Coordinator = &group.Coordinator{ReplicatedJob: "workers", JobIndex: 2, PodIndex: 9}
		},
			want: []fd{{"coordinator.jobIndex", "coordinator job index 2 is invalid for replicatedJob workers"}}},
		{name: "coordinator pod index", mutate: func(s *group.Spec) { s.Coordinator.PodIndex = 4 },
			want: []fd{{"coordinator.podIndex", "coordinator pod index 4 is invalid for replicatedJob workers job index 1"}}},
		{name: "coordinator label too long only because of the subdomain", mutate: func(s *group.Spec) { s.Subdomain = "n" + strings.Repeat("e", 49) },
			want: []fd{{"coordinator", `spec will lead to invalid label value "js-workers-1-3.n` + strings.Repeat("e", 49) +
				`" for coordinator label "jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain name?): must be no more than 63 bytes`}}},
		{name: "RestartJob over 1024 replicas", mutate: func(s *group.Spec) { s.Roles[0].Replicas = 1025 },
			want: []fd{{"failurePolicy.rules[1].action", "RestartJob keeps a restart count per child in status.replicatedJobsStatus[].jobRestarts, which holds at most 1024 items: replicatedJob 'leader' has 1025 replicas"}}},
		{name: "RestartJob over exactly 1024 replicas", mutate: func(s *group.Spec) { s.Roles[0].Replicas = 1024 }},
		{name: "a role the RestartJob rule does not target may be larger", mutate: func(s *group.Spec) {
			s.Roles[0].Replicas = 2000
			s.FailurePolicy.Rules[1].TargetReplicatedJobs = []string{"workers"}
		}},
		{name: "in-place restart: a valid template", mutate: inPlace},
		{name: "in-place restart: backoffLimit, podReplacementPolicy and completions", mutate: func(s *group.Spec) {
			inPlace(s)
			s.Roles[0].BackoffLimit = nil
			s.Roles[0].PodReplacementPolicy = "TerminatingOrFailed"
			s.Roles[0].Completions = nil
		}, want: []fd{
			{"replicatedJobs[0].template.spec.backoffLimit", "replicatedJob leader: must be set to 2147483647 (MaxInt32) when in-place restart is enabled"},
			{"replicatedJobs[0].template.spec.podReplacementPolicy", "replicatedJob leader: must be set to Failed when in-place restart is enabled"},
			{"replicatedJobs[0].template.spec.completions", "replicatedJob leader: completions and parallelism must be set and equal to each other when in-place restart is enabled"},
		}},
		{name: "generateName: the longest generated name is checked", mutate: func(s *group.Spec) {
			s.Name, s.GenerateName, s.Coordinator = "", strings.Repeat("g", 60), nil
		}, want: []fd{
			{"replicatedJobs[0].name", "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"},
			{"replicatedJobs[1].name", "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"},
			{"replicatedJobs[1].name", "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"},
		}},
		{name: "generateName: a short one is valid", mutate: func(s *group.Spec) { s.Name, s.GenerateName = "", "train-" }},
		{name: "group name too long and not a DNS-1035 label", mutate: func(s *group.Spec) { s.Roles[0].GroupName = strings.Repeat("G", 64) },
			want: []fd{
				{"replicatedJobs[0].groupName", ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"},
				{"replicatedJobs[0].groupName", dns1035},
			}},
		{name: "subdomain too long", mutate: func(s *group.Spec) { s.Subdomain = strings.Repeat("s", 64); s.Coordinator = nil },
			want: []fd{{"network.subdomain", ".spec.network.subdomain is too long, must be less than 63 characters"}}},
		{name: "dependsOn on the first role, and on a later one", mutate: func(s *group.Spec) {
			s.Roles[0].DependsOn = []group.Dependency{{Name: "workers", Status: group.DependsOnReady}}
		}, want: []fd{
			{"replicatedJobs[0].dependsOn", "DependsOn can't be set for the first ReplicatedJob"},
			{"replicatedJobs[0].dependsOn[0].name", "replicatedJob: leader cannot depend on replicatedJob: workers"},
		}},
		{name: "rule names repeated: one error with every index", mutate: func(s *group.Spec) {
			s.FailurePolicy.Rules = append(s.FailurePolicy.Rules, group.Rule{Name: "pfp", Action: group.FailJobSet}, group.Rule{Name: "pfp", Action: group.FailJobSet})
		}, want: []fd{{"failurePolicy.rules[2].name", "rule names are not unique, rules with indices [0 2 3] all have the same name 'pfp'"}}},
		{name: "targets of the policies", mutate: func(s *group.Spec) {
			s.SuccessPolicy.TargetReplicatedJobs = []string{"x"}
			s.FailurePolicy.Rules[0].TargetReplicatedJobs = []string{"y"}
		}, want: []fd{
			{"successPolicy.targetReplicatedJobs[0]", "invalid replicatedJob name 'x' does not appear in .spec.ReplicatedJobs"},
			{"failurePolicy.rules[0].targetReplicatedJobs[0]", "invalid replicatedJob name 'y' in failure policy does not appear in .spec.ReplicatedJobs"},
		}},
		{name: "managedBy with a bad domain", mutate: func(s *group.Spec) { s.ManagedBy = "Example.com/x" },
			want: []fd{{"managedBy", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}}},
		{name: "rule name too long", mutate: func(s *group.Spec) { s.FailurePolicy.Rules[0].Name = strings.Repeat("r", 129) },
			want: []fd{{"failurePolicy.rules[0].name", "invalid failure policy rule name of length 129, the rule name must be at least 1 characters long and at most 128 characters long"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(&s)
			var got []fd
			for _, e := range group.Validate(&s) {
				got = append(got, fd{e.Field, e.Detail})
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(fd{})); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
