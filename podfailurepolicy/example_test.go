package podfailurepolicy_test

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/podfailurepolicy"
)

func ExampleMatch() {
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{
			// A pod evicted or preempted is not the workload's fault.
			Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue},
			},
		},
		{
			// Exit code 42 means a bug that retries will not fix.
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:   []int32{42},
			},
		},
	}}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "train-0-x7k2p"},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:  "trainer",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}},
			}},
		},
	}
	res := podfailurepolicy.Match(policy, pod)
	fmt.Println(res.Matched, res.Action, res.RuleIndex, res.CountsTowardBackoff)
	fmt.Println(res.Message)

	pod.Status.ContainerStatuses[0].State.Terminated.ExitCode = 1
	res = podfailurepolicy.Match(policy, pod)
	fmt.Println(res.Matched, res.RuleIndex, res.CountsTowardBackoff)
	// Output:
	// true FailJob 1 true
	// Container trainer for pod default/train-0-x7k2p failed with exit code 42 matching FailJob rule at index 1
	// false -1 true
}

func ExampleValidate() {
	spec := &batchv1.JobSpec{
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailIndex,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				Operator: batchv1.PodFailurePolicyOnExitCodesOpIn,
				Values:   []int32{3, 0, 3},
			},
		}}},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			Containers:    []corev1.Container{{Name: "trainer"}},
		}},
	}
	for _, err := range podfailurepolicy.Validate(spec, nil) {
		fmt.Println(err)
	}
	// Output:
	// spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set
	// spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator
	// spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3
	// spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3,0,3]: must be ordered
	// spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified
}
