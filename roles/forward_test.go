package roles_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/roles"
)

// The forwarder answers what ownedpods answers, for the same input.
func TestForwarders(t *testing.T) {
	tests := []struct {
		name string
		in   roles.Input
	}{
		{name: "no workload", in: roles.Input{}},
		{name: "another controller's", in: roles.Input{
			Workload: &roles.Workload{Name: "w", Namespace: "ns", UID: "u", ManagedBy: ptr.To("someone-else"),
				Roles: []roles.Role{{Name: "r"}}},
			ControllerName: "me", Owner: owner.Kind{Group: "example.com", Version: "v1", Kind: "Run"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, gotErr := roles.Compute(tc.in)
			want, wantErr := ownedpods.Compute(tc.in)
			if diff := cmp.Diff(want, got); diff != "" || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("roles.Compute = %v; ownedpods.Compute = %v (-want +got):\n%s", gotErr, wantErr, diff)
			}
		})
	}
}
