package roles_test

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/roles"
)

// The old path still decides a sync of an owner of roles, as groups/ownedpods
// does; new code imports groups/ownedpods.
func ExampleCompute() {
	p, err := roles.Compute(roles.Input{
		Workload: &roles.Workload{Namespace: "default", Name: "run", UID: "u", ManagedBy: ptr.To("someone-else"),
			Roles: []roles.Role{{Name: "worker"}}},
		ControllerName: "example.com/me",
		Owner:          owner.Kind{Group: "example.com", Version: "v1", Kind: "Run", Finalizer: "example.com/tracking"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Skip)
	// Output:
	// spec.managedBy is "someone-else", not "example.com/me"
}
