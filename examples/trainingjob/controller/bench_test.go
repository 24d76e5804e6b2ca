package controller_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
)

// BenchmarkWorkload measures the conversion of one sync: its cost is the status
// copy, linear in the uncounted pods (10, 1,000 and the schema's bound of 100,000).
func BenchmarkWorkload(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		tj := validTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Workers = int32(n)
			u := &v1alpha1.UncountedTerminatedPods{}
			for i := range n {
				u.Succeeded = append(u.Succeeded, types.UID(fmt.Sprintf("pod-%d", i)))
			}
			tj.Status.UncountedTerminatedPods = u
		})
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := controller.Workload(tj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
