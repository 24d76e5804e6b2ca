package group_test

import (
	"testing"

	"github.com/jobkit/jobkit/plain/group"
)

func TestSpecExclusive(t *testing.T) {
	cases := []struct {
		name             string
		group            string
		groupNS          bool
		role             string
		roleNS           bool
		wantTopology     string
		wantNodeSelector bool
	}{
		{name: "none"},
		{name: "the group's", group: "rack", wantTopology: "rack"},
		{name: "the role's over the group's", group: "rack", role: "slice", wantTopology: "slice"},
		{name: "the role's alone", role: "slice", wantTopology: "slice"},
		{name: "node selector on the group", group: "rack", groupNS: true, wantTopology: "rack", wantNodeSelector: true},
		{name: "the group's node selector with the role's topology", group: "rack", groupNS: true, role: "slice", wantTopology: "slice", wantNodeSelector: true},
		{name: "node selector on the role", group: "rack", roleNS: true, wantTopology: "rack", wantNodeSelector: true},
		{name: "the group's node selector needs the group's topology", groupNS: true, role: "slice", wantTopology: "slice"},
		{name: "no topology, no strategy", groupNS: true, roleNS: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := group.Spec{ExclusiveTopology: tc.group, NodeSelectorStrategy: tc.groupNS,
				Roles: []group.Role{{Name: "workers", ExclusiveTopology: tc.role, NodeSelectorStrategy: tc.roleNS}}}
			topology, ns := s.Exclusive(0)
			if topology != tc.wantTopology || ns != tc.wantNodeSelector {
				t.Errorf("Exclusive(0) = %q, %v, want %q, %v", topology, ns, tc.wantTopology, tc.wantNodeSelector)
			}
		})
	}
}
