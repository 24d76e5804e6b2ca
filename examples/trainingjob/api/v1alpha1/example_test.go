package v1alpha1_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
)

// A run of four workers that fails at once when the trainer exits with 42,
// handed to code that speaks batch/v1.
func ExampleTrainingJob_PodFailurePolicy() {
	tj := &v1alpha1.TrainingJob{Spec: v1alpha1.TrainingJobSpec{
		Workers:              4,
		BackoffLimitPerIndex: ptr.To[int32](2),
		PodFailurePolicy: &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}},
		SuccessPolicy: &v1alpha1.SuccessPolicy{SucceededCount: 3},
	}}
	r := tj.PodFailurePolicy().Rules[0]
	fmt.Println(r.Action, r.OnExitCodes.Operator, r.OnExitCodes.Values)
	fmt.Println("succeeded workers needed:", *tj.SuccessPolicy().Rules[0].SucceededCount)
	// Output:
	// FailJob In [42]
	// succeeded workers needed: 3
}

// The status of a run converts to and from a batchv1.JobStatus without loss.
func ExampleStatusFromJob() {
	st := v1alpha1.StatusFromJob(batchv1.JobStatus{Active: 2, Succeeded: 1, CompletedIndexes: "0"})
	js := st.JobStatus()
	fmt.Println(st.Active, st.CompletedIndexes, js.Succeeded)
	// Output: 2 0 1
}

// A role of a run with a launcher keeps its attempt's pods as a Job status: it
// converts to and from batchv1.JobStatus without loss.
func ExampleAttemptStatusFromJob() {
	role := v1alpha1.RoleStatus{Attempt: 1, Succeeded: 5, Failed: 2}
	role.Current = v1alpha1.AttemptStatusFromJob(batchv1.JobStatus{Active: 3, Ready: ptr.To[int32](3), Succeeded: 1, CompletedIndexes: "2"})
	js := role.Current.JobStatus()
	fmt.Println(role.Attempt, role.Succeeded, js.Active, *js.Ready, js.CompletedIndexes)
	// Output: 1 5 3 3 2
}
