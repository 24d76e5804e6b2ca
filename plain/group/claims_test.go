package group_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/jobkit/jobkit/plain/group"
)

// claimSpec is a group "js" whose workers mount the claim "data" and whose
// leader mounts nothing.
func claimSpec() group.Spec {
	return group.Spec{Name: "js",
		Roles: []group.Role{
			{Name: "leader", Replicas: 1, Parallelism: 1, Volumes: []string{"scratch"}},
			{Name: "workers", Replicas: 2, Parallelism: 1, VolumeMounts: []string{"scratch", "data"}},
		},
		VolumeClaims: []group.VolumeClaim{{Name: "data"}},
	}
}

func TestValidateClaims(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*group.Spec)
		want   []string
	}{
		{name: "valid", mutate: func(*group.Spec) {}},
		{name: "retain", mutate: func(s *group.Spec) { s.VolumeClaims[0].WhenDeleted = "Retain" }},
		{name: "an unknown retention, once per policy", mutate: func(s *group.Spec) {
			s.VolumeClaims[0].WhenDeleted = "Keep"
			s.Roles[1].VolumeMounts = append(s.Roles[1].VolumeMounts, "more")
			s.VolumeClaims = append(s.VolumeClaims, group.VolumeClaim{Name: "more", Template: 1, WhenDeleted: "Keep"})
		}, want: []string{`volumeClaimPolicies[0].retentionPolicy.whenDeleted: Unsupported value: supported values: ["Delete" "Retain"]`}},
		{name: "a namespace", mutate: func(s *group.Spec) { s.VolumeClaims[0].Namespace = "other" },
			want: []string{"volumeClaimPolicies[0]: Invalid value: namespace cannot be set for VolumeClaimPolicies templates"}},
		{name: "a name twice", mutate: func(s *group.Spec) {
			s.VolumeClaims = append(s.VolumeClaims, group.VolumeClaim{Name: "data", Policy: 1})
		}, want: []string{"volumeClaimPolicies[1].template[0].name: Invalid value: names must be unique for VolumeClaimPolicies template"}},
		{name: "not a DNS-1123 subdomain", mutate: func(s *group.Spec) {
			s.VolumeClaims[0].Name = "Data"
			s.Roles[1].VolumeMounts = []string{"Data"}
		}, want: []string{"volumeClaimPolicies[0].template[0].name: Invalid value: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}},
		{name: "a claim name over 63 characters", mutate: func(s *group.Spec) {
			n := strings.Repeat("d", 61) // 61 + len("-js") = 64
			s.VolumeClaims[0].Name = n
			s.Roles[1].VolumeMounts = []string{n}
		}, want: []string{"volumeClaimPolicies[0].template[0].name: Invalid value: VolumeClaimPolicies template name is too long"}},
		{name: "mounted by no role", mutate: func(s *group.Spec) { s.Roles[1].VolumeMounts = nil },
			want: []string{"replicatedJobs: Invalid value: replicatedJob containers don't have a matching volumeMount: data from VolumeClaimPolicies"}},
		{name: "a role's volume of the claim's name", mutate: func(s *group.Spec) { s.Roles[0].Volumes = []string{"scratch", "data"} },
			want: []string{"replicatedJobs[0].template.spec.template.spec.volumes[1].name: Invalid value: volume name conflicts with VolumeClaimPolicy template name: data"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := claimSpec()
			tc.mutate(&s)
			var got []string
			for _, e := range group.Validate(&s) {
				got = append(got, e.Field+": "+string(e.Type)+": "+e.Detail)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestVolumeClaimRules(t *testing.T) {
	s := claimSpec()
	c := &s.VolumeClaims[0]
	assert.Equal(t, "data-js", c.ClaimName("js"))
	assert.True(t, c.Owned(), "Delete is the default")
	c.WhenDeleted = "Retain"
	assert.False(t, c.Owned())
	c.WhenDeleted = "Delete"
	assert.True(t, c.Owned())

	assert.Empty(t, s.Claims(0), "the leader mounts no claim")
	assert.Equal(t, []int{0}, s.Claims(1))

	d := group.Default(claimSpec())
	assert.Equal(t, "Delete", d.VolumeClaims[0].WhenDeleted)
	assert.Empty(t, claimSpec().VolumeClaims[0].WhenDeleted, "Default copies")

	old := claimSpec()
	n := claimSpec()
	n.VolumeClaims[0].WhenDeleted = "Delete"
	assert.Empty(t, group.ValidateUpdate(&old, &n), "filling the default is no change")
	n.VolumeClaims[0].WhenDeleted = "Retain"
	errs := group.ValidateUpdate(&old, &n)
	if assert.Len(t, errs, 1) {
		assert.Equal(t, "volumeClaimPolicies", errs[0].Field)
		assert.Equal(t, "Value is immutable", errs[0].Detail)
	}
}
