package podfailurepolicy

import (
	"fmt"
	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// failedPod builds a failed pod "ns/pod-1" with the given statuses and conditions.
func failedPod(containers, initContainers []corev1.ContainerStatus, conditions ...corev1.PodCondition) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod-1"},
		Status: corev1.PodStatus{
			Phase:                 corev1.PodFailed,
			ContainerStatuses:     containers,
			InitContainerStatuses: initContainers,
			Conditions:            conditions,
		},
	}
}

func terminated(name string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:  name,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}},
	}
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:  name,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}
}

func cond(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s}
}

func exitRule(action batchv1.PodFailurePolicyAction, op batchv1.PodFailurePolicyOnExitCodesOperator, values ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{
		Action:      action,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: values},
	}
}

func containerRule(action batchv1.PodFailurePolicyAction, container string, op batchv1.PodFailurePolicyOnExitCodesOperator, values ...int32) batchv1.PodFailurePolicyRule {
	r := exitRule(action, op, values...)
	r.OnExitCodes.ContainerName = ptr.To(container)
	return r
}

func condRule(action batchv1.PodFailurePolicyAction, patterns ...batchv1.PodFailurePolicyOnPodConditionsPattern) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnPodConditions: patterns}
}

func pattern(t corev1.PodConditionType, s corev1.ConditionStatus) batchv1.PodFailurePolicyOnPodConditionsPattern {
	return batchv1.PodFailurePolicyOnPodConditionsPattern{Type: t, Status: s}
}

func policy(rules ...batchv1.PodFailurePolicyRule) *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: rules}
}

const (
	failJob   = batchv1.PodFailurePolicyActionFailJob
	failIndex = batchv1.PodFailurePolicyActionFailIndex
	ignore    = batchv1.PodFailurePolicyActionIgnore
	count     = batchv1.PodFailurePolicyActionCount
	opIn      = batchv1.PodFailurePolicyOnExitCodesOpIn
	opNotIn   = batchv1.PodFailurePolicyOnExitCodesOpNotIn
)

func TestMatch(t *testing.T) {
	mainFailed := failedPod([]corev1.ContainerStatus{terminated("main", 42)}, nil)
	disrupted := failedPod(nil, nil, cond(corev1.DisruptionTarget, corev1.ConditionTrue))

	cases := map[string]struct {
		policy *batchv1.PodFailurePolicy
		pod    *corev1.Pod
		want   Result
	}{
		"nil policy counts": {
			policy: nil,
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"nil pod counts": {
			policy: policy(exitRule(failJob, opNotIn, 1)),
			pod:    nil,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"no rules counts": {
			policy: policy(),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"FailJob on exit code counts with upstream message": {
			policy: policy(exitRule(failJob, opIn, 1, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching FailJob rule at index 0"},
		},
		"Ignore on exit code does not count": {
			policy: policy(exitRule(ignore, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: ignore, RuleIndex: 0, CountsTowardBackoff: false,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching Ignore rule at index 0"},
		},
		"Count on exit code counts": {
			policy: policy(exitRule(count, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: count, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching Count rule at index 0"},
		},
		"FailIndex on exit code counts": {
			policy: policy(exitRule(failIndex, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: failIndex, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching FailIndex rule at index 0"},
		},
		"first matching rule wins": {
			policy: policy(exitRule(ignore, opIn, 42), exitRule(failJob, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: ignore, RuleIndex: 0, CountsTowardBackoff: false,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching Ignore rule at index 0"},
		},
		"rules that do not match are passed over": {
			policy: policy(exitRule(ignore, opIn, 1), condRule(ignore, pattern(corev1.DisruptionTarget, "")), exitRule(failJob, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: failJob, RuleIndex: 2, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching FailJob rule at index 2"},
		},
		"rule with unknown action is skipped": {
			policy: policy(exitRule("Retry", opIn, 42), exitRule(count, opIn, 42)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: count, RuleIndex: 1, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching Count rule at index 1"},
		},
		"rule with empty action is skipped": {
			policy: policy(exitRule("", opIn, 42)),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"only unknown actions: no match": {
			policy: policy(exitRule("Retry", opIn, 42), condRule("Retry", pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 42)}, nil, cond(corev1.DisruptionTarget, corev1.ConditionTrue)),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"unknown operator never matches": {
			policy: policy(exitRule(failJob, "Between", 42), exitRule(failJob, "", 42)),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"In: exit code not in values": {
			policy: policy(exitRule(failJob, opIn, 1, 2, 3)),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"In: empty values never match": {
			policy: policy(exitRule(failJob, opIn)),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"NotIn: exit code not in values matches": {
			policy: policy(exitRule(failJob, opNotIn, 1, 2, 3)),
			pod:    mainFailed,
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 42 matching FailJob rule at index 0"},
		},
		"NotIn: exit code in values does not match": {
			policy: policy(exitRule(failJob, opNotIn, 40, 42)),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"NotIn never matches a zero exit code": {
			policy: policy(exitRule(failJob, opNotIn, 1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 0)}, nil),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"In with value 0 never matches a zero exit code": {
			policy: policy(exitRule(failJob, opIn, 0, 1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 0)}, []corev1.ContainerStatus{terminated("init", 0)}),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"zero exit code is passed over for a later failed container": {
			policy: policy(exitRule(failJob, opNotIn, 1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("ok", 0), terminated("bad", 3)}, nil),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container bad for pod ns/pod-1 failed with exit code 3 matching FailJob rule at index 0"},
		},
		"negative exit code": {
			policy: policy(exitRule(failJob, opIn, -1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", -1)}, nil),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code -1 matching FailJob rule at index 0"},
		},
		"running container is ignored": {
			policy: policy(exitRule(failJob, opNotIn, 1)),
			pod:    failedPod([]corev1.ContainerStatus{running("main")}, nil),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"last termination state of a waiting container is ignored": {
			policy: policy(exitRule(failJob, opIn, 5)),
			pod: failedPod([]corev1.ContainerStatus{{
				Name:                 "main",
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 5}},
			}}, nil),
			want: Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"containerName restricts to that container": {
			policy: policy(containerRule(failJob, "sidecar", opIn, 1, 2)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 1), terminated("sidecar", 2)}, nil),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container sidecar for pod ns/pod-1 failed with exit code 2 matching FailJob rule at index 0"},
		},
		"containerName of a container that did not fail the rule": {
			policy: policy(containerRule(failJob, "sidecar", opIn, 1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 1), terminated("sidecar", 2)}, nil),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"containerName absent from the pod": {
			policy: policy(containerRule(failJob, "other", opNotIn, 1)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 7)}, []corev1.ContainerStatus{terminated("init", 7)}),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"containerName of an init container": {
			policy: policy(containerRule(ignore, "init", opIn, 7)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 7)}, []corev1.ContainerStatus{terminated("init", 7)}),
			want: Result{Matched: true, Action: ignore, RuleIndex: 0, CountsTowardBackoff: false,
				Message: "Container init for pod ns/pod-1 failed with exit code 7 matching Ignore rule at index 0"},
		},
		"regular containers are checked before init containers": {
			policy: policy(exitRule(failJob, opIn, 5, 6)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 6)}, []corev1.ContainerStatus{terminated("init", 5)}),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container main for pod ns/pod-1 failed with exit code 6 matching FailJob rule at index 0"},
		},
		"init container matches when no regular container does": {
			policy: policy(exitRule(failJob, opIn, 5)),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 6), running("sidecar")}, []corev1.ContainerStatus{terminated("init", 5)}),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Container init for pod ns/pod-1 failed with exit code 5 matching FailJob rule at index 0"},
		},
		"condition True matches pattern True": {
			policy: policy(condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    disrupted,
			want: Result{Matched: true, Action: ignore, RuleIndex: 0, CountsTowardBackoff: false,
				Message: "Pod ns/pod-1 has condition DisruptionTarget matching Ignore rule at index 0"},
		},
		"condition FailJob counts with upstream message": {
			policy: policy(condRule(failJob, pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    disrupted,
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Pod ns/pod-1 has condition DisruptionTarget matching FailJob rule at index 0"},
		},
		"condition FailIndex counts": {
			policy: policy(condRule(failIndex, pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    disrupted,
			want: Result{Matched: true, Action: failIndex, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Pod ns/pod-1 has condition DisruptionTarget matching FailIndex rule at index 0"},
		},
		"empty pattern status defaults to True": {
			policy: policy(condRule(count, pattern(corev1.DisruptionTarget, ""))),
			pod:    disrupted,
			want: Result{Matched: true, Action: count, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Pod ns/pod-1 has condition DisruptionTarget matching Count rule at index 0"},
		},
		"empty pattern status does not match a False condition": {
			policy: policy(condRule(count, pattern(corev1.DisruptionTarget, ""))),
			pod:    failedPod(nil, nil, cond(corev1.DisruptionTarget, corev1.ConditionFalse)),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"pattern False does not match a True condition": {
			policy: policy(condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionFalse))),
			pod:    disrupted,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"pattern False matches a False condition": {
			policy: policy(condRule(ignore, pattern("Custom", corev1.ConditionFalse))),
			pod:    failedPod(nil, nil, cond("Custom", corev1.ConditionFalse)),
			want: Result{Matched: true, Action: ignore, RuleIndex: 0, CountsTowardBackoff: false,
				Message: "Pod ns/pod-1 has condition Custom matching Ignore rule at index 0"},
		},
		"pattern Unknown matches an Unknown condition": {
			policy: policy(condRule(failJob, pattern(corev1.PodReady, corev1.ConditionUnknown))),
			pod:    failedPod(nil, nil, cond(corev1.PodReady, corev1.ConditionUnknown)),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Pod ns/pod-1 has condition Ready matching FailJob rule at index 0"},
		},
		"condition type must be equal": {
			policy: policy(condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    failedPod(nil, nil, cond(corev1.PodReady, corev1.ConditionTrue)),
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"first pod condition in pod order is reported": {
			policy: policy(condRule(failJob, pattern(corev1.DisruptionTarget, corev1.ConditionTrue), pattern(corev1.PodReady, corev1.ConditionFalse))),
			pod:    failedPod(nil, nil, cond(corev1.PodScheduled, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.DisruptionTarget, corev1.ConditionTrue)),
			want: Result{Matched: true, Action: failJob, RuleIndex: 0, CountsTowardBackoff: true,
				Message: "Pod ns/pod-1 has condition Ready matching FailJob rule at index 0"},
		},
		"empty onPodConditions never matches": {
			policy: policy(condRule(failJob, []batchv1.PodFailurePolicyOnPodConditionsPattern{}...)),
			pod:    disrupted,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"rule with both requirements looks at exit codes only": {
			policy: policy(batchv1.PodFailurePolicyRule{
				Action:          failJob,
				OnExitCodes:     &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: opIn, Values: []int32{1}},
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{pattern(corev1.DisruptionTarget, corev1.ConditionTrue)},
			}),
			pod:  failedPod([]corev1.ContainerStatus{terminated("main", 2)}, nil, cond(corev1.DisruptionTarget, corev1.ConditionTrue)),
			want: Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"rule with no requirement never matches": {
			policy: policy(batchv1.PodFailurePolicyRule{Action: failJob}),
			pod:    mainFailed,
			want:   Result{RuleIndex: -1, CountsTowardBackoff: true},
		},
		"condition rule after exit-code rule": {
			policy: policy(exitRule(failJob, opIn, 1), condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue))),
			pod:    failedPod([]corev1.ContainerStatus{terminated("main", 137)}, nil, cond(corev1.DisruptionTarget, corev1.ConditionTrue)),
			want: Result{Matched: true, Action: ignore, RuleIndex: 1, CountsTowardBackoff: false,
				Message: "Pod ns/pod-1 has condition DisruptionTarget matching Ignore rule at index 1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var podBefore *corev1.Pod
			if tc.pod != nil {
				podBefore = tc.pod.DeepCopy()
			}
			policyBefore := tc.policy.DeepCopy()

			got := Match(tc.policy, tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Match() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(podBefore, tc.pod); diff != "" {
				t.Errorf("Match() modified the pod (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(policyBefore, tc.policy); diff != "" {
				t.Errorf("Match() modified the policy (-before +after):\n%s", diff)
			}
		})
	}
}

// TestMatchMessageFormats checks the messages against the format strings of the
// upstream Job controller, with names of every length and numbers of every sign.
func TestMatchMessageFormats(t *testing.T) {
	const (
		exitFormat = "Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d"
		condFormat = "Pod %s/%s has condition %v matching %v rule at index %d"
	)
	longName := "a-very-long-pod-name-that-goes-on-and-on-" + fmt.Sprint(1<<40)
	for _, code := range []int32{1, -1, 255, 2147483647, -2147483648} {
		pod := failedPod([]corev1.ContainerStatus{terminated("c", code)}, nil, cond("example.com/Custom", corev1.ConditionTrue))
		pod.Name = longName
		rules := []batchv1.PodFailurePolicyRule{exitRule(count, opIn, 7)}
		for len(rules) < 12 {
			rules = append(rules, exitRule(count, opIn, 7))
		}
		p := policy(append(rules, exitRule(failJob, opNotIn, 7))...)
		got := Match(p, pod)
		want := fmt.Sprintf(exitFormat, "c", "ns", longName, code, failJob, 12)
		assert.Equal(t, want, got.Message, "Match(exit code %d).Message", code)

		p = policy(append(rules, condRule(ignore, pattern("example.com/Custom", "")))...)
		got = Match(p, pod)
		want = fmt.Sprintf(condFormat, "ns", longName, corev1.PodConditionType("example.com/Custom"), ignore, 12)
		assert.Equal(t, want, got.Message, "Match(condition).Message")
	}
}

func TestMatchAllocations(t *testing.T) {
	p := maximalMatchPolicy()
	noMatchPod := failedPod([]corev1.ContainerStatus{terminated("main", 1)}, []corev1.ContainerStatus{terminated("init", 1)},
		cond(corev1.PodReady, corev1.ConditionFalse))
	matchPod := failedPod([]corev1.ContainerStatus{terminated("main", 200)}, nil)

	allocs := testing.AllocsPerRun(100, func() { _ = Match(p, noMatchPod) })
	assert.Zero(t, allocs, "Match(no rule matches) allocations")

	allocs = testing.AllocsPerRun(100, func() { _ = Match(p, matchPod) })
	assert.Equal(t, 1.0, allocs, "Match(last rule matches) allocations")
}

// maximalMatchPolicy has MaxRules rules: 19 that match neither noMatchPod nor
// matchPod of the tests and benchmarks, then one that matches exit code 200.
func maximalMatchPolicy() *batchv1.PodFailurePolicy {
	var rules []batchv1.PodFailurePolicyRule
	for i := range plainpfp.MaxRules - 1 {
		if i%2 == 0 {
			values := make([]int32, 0, plainpfp.MaxExitCodeValues)
			for v := int32(2); len(values) < plainpfp.MaxExitCodeValues; v++ {
				if v != 200 {
					values = append(values, v+int32(i)*1000)
				}
			}
			rules = append(rules, exitRule(failJob, opIn, values...))
			continue
		}
		patterns := make([]batchv1.PodFailurePolicyOnPodConditionsPattern, 0, plainpfp.MaxConditionPatterns)
		for j := range plainpfp.MaxConditionPatterns {
			patterns = append(patterns, pattern(corev1.PodConditionType(fmt.Sprintf("Condition%d", j)), corev1.ConditionTrue))
		}
		rules = append(rules, condRule(ignore, patterns...))
	}
	rules = append(rules, exitRule(failJob, opIn, 200))
	return policy(rules...)
}
