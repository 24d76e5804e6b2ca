package podfailurepolicy

import (
	"fmt"
	plainpfp "github.com/jobkit/jobkit/plain/podfailurepolicy"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func BenchmarkMatch(b *testing.B) {
	p := maximalMatchPolicy()
	pods := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"rules=20/last-rule-matches", failedPod([]corev1.ContainerStatus{terminated("main", 200)}, []corev1.ContainerStatus{terminated("init", 1)},
			cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.DisruptionTarget, corev1.ConditionTrue))},
		{"rules=20/no-match", failedPod([]corev1.ContainerStatus{terminated("main", 1)}, []corev1.ContainerStatus{terminated("init", 1)},
			cond(corev1.PodReady, corev1.ConditionFalse), cond(corev1.DisruptionTarget, corev1.ConditionTrue))},
		{"rules=20/first-rule-matches", failedPod([]corev1.ContainerStatus{terminated("main", 2)}, nil)},
	}
	for _, tc := range pods {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Match(p, tc.pod)
			}
		})
	}
}

// maximalValidSpec is a valid spec with a policy at every limit: 20 rules, half with
// 255 exit codes and half with 20 condition patterns.
func maximalValidSpec() *batchv1.JobSpec {
	var rules []batchv1.PodFailurePolicyRule
	for i := range plainpfp.MaxRules {
		if i%2 == 0 {
			r := containerRule(failIndex, "init", opIn, seq(1, plainpfp.MaxExitCodeValues)...)
			rules = append(rules, r)
			continue
		}
		ps := make([]batchv1.PodFailurePolicyOnPodConditionsPattern, plainpfp.MaxConditionPatterns)
		for j := range ps {
			ps[j] = pattern(corev1.PodConditionType(fmt.Sprintf("example.com/Condition-%d", j)), corev1.ConditionFalse)
		}
		rules = append(rules, condRule(ignore, ps...))
	}
	spec := jobSpec(rules...)
	spec.BackoffLimitPerIndex = ptr.To[int32](3)
	spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	return spec
}

func BenchmarkValidate(b *testing.B) {
	valid := maximalValidSpec()
	if errs := Validate(valid, nil); len(errs) != 0 {
		b.Fatalf("Validate(maximal spec) = %v, want no errors", errs)
	}
	invalid := maximalValidSpec()
	for i := range invalid.PodFailurePolicy.Rules {
		if r := invalid.PodFailurePolicy.Rules[i].OnExitCodes; r != nil {
			// Reverse the values: unordered, so the duplicate check needs a set.
			for l, h := 0, len(r.Values)-1; l < h; l, h = l+1, h-1 {
				r.Values[l], r.Values[h] = r.Values[h], r.Values[l]
			}
		}
	}
	for _, tc := range []struct {
		name string
		spec *batchv1.JobSpec
	}{{"maximal/valid", valid}, {"maximal/unordered", invalid}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Validate(tc.spec, nil)
			}
		})
	}
}

// BenchmarkMatchMany matches n failed pods against a small policy: the work of one
// sync of a Job with n failed pods (the plain package's BenchmarkMatchMany, with pods).
func BenchmarkMatchMany(b *testing.B) {
	p := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		condRule(ignore, pattern(corev1.DisruptionTarget, corev1.ConditionTrue)),
		containerRule(failJob, "task", opIn, 42),
	}}
	for _, n := range []int{10, 1000, 100000} {
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			pods[i] = failedPod([]corev1.ContainerStatus{terminated("task", int32(i%50+1))}, nil)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, pod := range pods {
					_ = Match(p, pod)
				}
			}
		})
	}
}
