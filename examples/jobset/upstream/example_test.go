package upstream_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/jobset/upstream"
)

// Input converts a JobSet of JobSet's own API onto the child-Jobs layer, with
// the defaults of JobSet's webhook applied to its copy.
func ExampleInput() {
	js := &jobset.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train"},
		Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{
			{Name: "leader", Replicas: 1},
			{Name: "workers", Replicas: 4},
		}},
	}
	in := upstream.Input(js)
	fmt.Println(in.Owner.GroupVersion(), in.Owner.Kind)
	for i, r := range in.Spec.Roles {
		fmt.Println(r.Name, r.Replicas, *in.Templates[i].Spec.CompletionMode)
	}
	fmt.Println("success:", in.Spec.SuccessPolicy.Operator, "startup:", in.Spec.StartupOrder)
	fmt.Println("the JobSet's own template untouched:", js.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode == (*batchv1.CompletionMode)(nil))
	// Output:
	// jobset.x-k8s.io/v1alpha2 JobSet
	// leader 1 Indexed
	// workers 4 Indexed
	// success: All startup: AnyOrder
	// the JobSet's own template untouched: true
}
