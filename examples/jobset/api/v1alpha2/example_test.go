package v1alpha2_test

import (
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

// The sample: a leader and workers that wait for it, read as the API types.
func Example() {
	data, err := os.ReadFile("../../config/samples/jobset.yaml")
	if err != nil {
		panic(err)
	}
	var js v1alpha2.JobSet
	if err := yaml.UnmarshalStrict(data, &js); err != nil {
		panic(err)
	}
	for _, r := range js.Spec.ReplicatedJobs {
		fmt.Printf("%s: %d child Jobs, dependsOn %v\n", r.Name, r.Replicas, r.DependsOn)
	}
	fmt.Println("succeeds when:", js.Spec.SuccessPolicy.Operator, js.Spec.SuccessPolicy.TargetReplicatedJobs)
	// Output:
	// leader: 1 child Jobs, dependsOn []
	// workers: 3 child Jobs, dependsOn [{leader Ready}]
	// succeeds when: Any [leader]
}
