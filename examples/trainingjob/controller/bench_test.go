package controller_test

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
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

// BenchmarkRolesStatus measures the conversions of one sync of a run with a
// launcher: RolesWorkload (the status read) and StatusFromRoles (the status
// written), linear in the workers' uncounted pods.
func BenchmarkRolesStatus(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		u := &batchv1.UncountedTerminatedPods{}
		for i := range n {
			u.Succeeded = append(u.Succeeded, types.UID(fmt.Sprintf("pod-%d", i)))
		}
		tj := launcherTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Workers = int32(n)
			tj.Status.Workers.Current = v1alpha1.AttemptStatus{UncountedTerminatedPods: u}
		})
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w, err := controller.RolesWorkload(tj)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := controller.StatusFromRoles(w.Status); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
