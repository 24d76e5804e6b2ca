package scenarios

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// backoffLimit 1: the second failed pod fails the Job.
func backoffLimitExceeded(s *scenario) {
	s.kubelet.setPolicy(func(*corev1.Pod) outcome { return failWith(1) })
	j := s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1))
	j.Spec.BackoffLimit = ptr.To[int32](1)
	s.createJob(j)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Failed: 2, Conditions: failedWith(batchv1.JobReasonBackoffLimitExceeded)})
	s.countPods(jobName, 2)
}

// A pod exiting with 42 matches a FailJob rule: the Job fails at once; its other
// running pod is deleted and, once terminated, counted as failed.
func podFailurePolicyFailJob(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	s.createJob(j)
	pods := s.waitRunning(jobName, 2)
	s.finish(pods[0], failWith(42))
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Failed: 2, Conditions: failedWith(batchv1.JobReasonPodFailurePolicy)})
	want := fmt.Sprintf("Container main for pod %s/%s failed with exit code 42 matching FailJob rule at index 0", s.ns, pods[0].Name)
	if c := conditionOf(job, batchv1.JobFailed); c == nil || c.Message != want {
		s.t.Errorf("Failed condition = %+v, want message %q", c, want)
	}
	s.countPods(jobName, 1) // the deleted pod went once counted
}

// With backoffLimit 0, an evicted pod (DisruptionTarget) matched by an Ignore rule is
// replaced without counting; the replacement succeeds.
func podFailurePolicyIgnore(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1))
	j.Spec.BackoffLimit = ptr.To[int32](0)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:          batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
	}}}
	s.createJob(j)
	pods := s.waitRunning(jobName, 1)
	s.finish(pods[0], outcome{phase: corev1.PodFailed, exitCode: exitKilled, evict: true})
	s.waitPods(jobName, "a replacement", func(p []*corev1.Pod) bool { return len(filter(p, isRunning)) == 1 && len(p) == 2 })
	s.succeedAll()
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 1, Conditions: completed})
	s.countPods(jobName, 2)
}

// A FailIndex rule fails index 1 at its first failure although backoffLimitPerIndex
// allows one retry; the other indexes succeed and the Job fails with FailedIndexes.
func podFailurePolicyFailIndex(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](3), ptr.To[int32](3))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailIndex,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	s.createJob(j)
	pods := s.waitRunning(jobName, 3)
	s.finish(podWithIndex(pods, "1"), failWith(42))
	s.waitJob(jobName, `failedIndexes "1"`, func(j *batchv1.Job) bool { return ptr.Deref(j.Status.FailedIndexes, "") == "1" })
	s.finish(podWithIndex(pods, "0"), succeed)
	s.finish(podWithIndex(pods, "2"), succeed)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Failed: 1, CompletedIndexes: "0,2", FailedIndexes: ptr.To("1"), Conditions: failedWith(batchv1.JobReasonFailedIndexes)})
	s.countPods(jobName, 3)
}

// backoffLimitPerIndex 1 and maxFailedIndexes 1: index 0 fails twice (failed index,
// the Job goes on), then index 1 fails twice and the Job fails.
func backoffLimitPerIndex(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](4), ptr.To[int32](4))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
	j.Spec.MaxFailedIndexes = ptr.To[int32](1)
	s.createJob(j)
	pods := s.waitRunning(jobName, 4)
	s.finish(podWithIndex(pods, "2"), succeed)
	s.finish(podWithIndex(pods, "3"), succeed)
	s.waitJob(jobName, `completedIndexes "2,3"`, func(j *batchv1.Job) bool { return j.Status.CompletedIndexes == "2,3" })

	failTwice := func(index string, running int) {
		s.t.Helper()
		first := podWithIndex(s.waitRunning(jobName, running), index)
		s.finish(first, failWith(1))
		retry := s.waitPods(jobName, "a retry of index "+index, func(p []*corev1.Pod) bool {
			r := podWithIndex(p, index)
			return r != nil && r.UID != first.UID
		})
		r := podWithIndex(retry, index)
		if got := r.Annotations[batchv1.JobIndexFailureCountAnnotation]; got != "1" {
			s.t.Errorf("retry of index %s: annotation %s = %q, want \"1\"", index, batchv1.JobIndexFailureCountAnnotation, got)
		}
		s.finish(r, failWith(1))
	}
	failTwice("0", 2)
	s.waitJob(jobName, `failedIndexes "0"`, func(j *batchv1.Job) bool { return ptr.Deref(j.Status.FailedIndexes, "") == "0" })
	if job := s.getJob(jobName); hasCondition(job, batchv1.JobFailed) || hasCondition(job, batchv1.JobFailureTarget) {
		s.t.Fatalf("Job failed with one failed index (maxFailedIndexes 1): %s", describeJob(job))
	}
	failTwice("1", 1)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Failed: 4, CompletedIndexes: "2,3", FailedIndexes: ptr.To("0,1"), Conditions: failedWith(batchv1.JobReasonMaxFailedIndexesExceeded)})
	s.countPods(jobName, 6)
}

// A success policy on index 0: once it succeeds the Job meets its success criteria
// and the other pods are deleted; as upstream, they lose their finalizer in that sync
// without being counted (only a failing Job counts its deleted pods as failed).
func successPolicy(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](3), ptr.To[int32](3))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	s.createJob(j)
	pods := s.waitRunning(jobName, 3)
	s.finish(podWithIndex(pods, "0"), succeed)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 1, CompletedIndexes: "0", Conditions: []string{
		cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy), cond(batchv1.JobComplete, batchv1.JobReasonSuccessPolicy),
	}})
	if c := conditionOf(job, batchv1.JobComplete); c == nil || c.Message != "Matched rules at index 0" {
		s.t.Errorf("Complete condition = %+v, want message %q", c, "Matched rules at index 0")
	}
	s.countPods(jobName, 1) // the deleted pods are gone
}

// podReplacementPolicy Failed: a pod being deleted is counted in status.terminating
// and not replaced until it has failed.
func podReplacementPolicyFailed(s *scenario) {
	s.kubelet.holdTerminating(true)
	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
	s.createJob(j)
	pods := s.waitRunning(jobName, 2)
	victim := pods[0]
	if err := s.cs.CoreV1().Pods(s.ns).Delete(s.ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		s.t.Fatalf("delete pod: %v", err)
	}
	s.waitJob(jobName, "terminating=1 active=1", func(j *batchv1.Job) bool {
		return ptr.Deref(j.Status.Terminating, 0) == 1 && j.Status.Active == 1
	})
	s.consistently("no replacement while the pod terminates", func() (bool, string) {
		return len(s.podsOf(jobName)) == 2, s.describePods(jobName)
	})

	s.succeedAll()
	s.kubelet.holdTerminating(false) // the kubelet kills it: phase Failed
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Failed: 1, Conditions: completed})
	s.countPods(jobName, 2) // the killed pod went once counted
}
