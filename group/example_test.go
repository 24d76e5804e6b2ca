package group_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/group"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The old path still plans a group's sync, as groups/childjobs does; new code
// imports groups/childjobs.
func ExampleCompute() {
	p, err := group.Compute(&group.Input{
		Name: "run", Namespace: "default", UID: "u",
		Owner:     schema.GroupVersionKind{Group: "ml.example.com", Version: "v1", Kind: "Run"},
		Spec:      plaingroup.Spec{Roles: []plaingroup.Role{{Name: "leader", Replicas: 1}}},
		Templates: []batchv1.JobTemplateSpec{{}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(p.Create), p.Create[0].Job.Name)
	// Output:
	// 1 run-leader-0
}
