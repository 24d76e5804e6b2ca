package scenarios

import (
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// NonIndexed: 3 completions, 2 at a time, every pod succeeds; exactly 3 pods.
func nonIndexedCompletion(s *scenario) {
	s.succeedAll()
	s.createJob(s.newJob(jobName, ptr.To[int32](3), ptr.To[int32](2)))
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 3, Conditions: completed})
	s.countPods(jobName, 3)
	s.eventually("a Completed event on the Job", func() (bool, string) {
		list, err := s.cs.CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var reasons []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Job" && e.InvolvedObject.Name == jobName {
				reasons = append(reasons, e.Reason)
			}
		}
		return slices.Contains(reasons, "Completed") && slices.Contains(reasons, "SuccessfulCreate"), fmt.Sprint(reasons)
	})
}

// Indexed: 4 completions, 2 at a time; one pod per index.
func indexedCompletion(s *scenario) {
	s.succeedAll()
	j := s.newJob(jobName, ptr.To[int32](4), ptr.To[int32](2))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	s.createJob(j)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 4, CompletedIndexes: "0-3", Conditions: completed})
	var indexes []string
	for _, p := range s.podsOf(jobName) {
		indexes = append(indexes, indexOf(p))
	}
	slices.Sort(indexes)
	if want := []string{"0", "1", "2", "3"}; !slices.Equal(indexes, want) {
		s.t.Errorf("indexes of the pods = %v, want %v", indexes, want)
	}
}

// Parallelism 2 → 4 → 1 on a Job without completions, then the last pod succeeds:
// the pods removed by the scale-down are not failures.
func scaleUpAndDown(s *scenario) {
	s.createJob(s.newJob(jobName, nil, ptr.To[int32](2)))
	s.waitRunning(jobName, 2)
	s.waitJob(jobName, "active=2 ready=2", func(j *batchv1.Job) bool { return j.Status.Active == 2 && ptr.Deref(j.Status.Ready, 0) == 2 })

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](4) })
	s.waitRunning(jobName, 4)
	s.waitJob(jobName, "active=4 ready=4", func(j *batchv1.Job) bool { return j.Status.Active == 4 && ptr.Deref(j.Status.Ready, 0) == 4 })

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	s.waitPods(jobName, "scaled down to one pod", func(pods []*corev1.Pod) bool { return len(pods) == 1 && isRunning(pods[0]) })
	job := s.waitJob(jobName, "active=1", func(j *batchv1.Job) bool { return j.Status.Active == 1 && ptr.Deref(j.Status.Ready, 0) == 1 })
	if job.Status.Failed != 0 {
		s.t.Errorf("status.failed = %d after a scale-down, want 0", job.Status.Failed)
	}

	s.succeedAll()
	job = s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 1, Conditions: completed})
}

// A Job created suspended starts nothing; resumed, it runs; suspended again, its
// pods go without counting as failures; resumed, it completes.
func suspendAndResume(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.Suspend = ptr.To(true)
	s.createJob(j)
	job := s.waitJob(jobName, "Suspended", func(j *batchv1.Job) bool { return hasCondition(j, batchv1.JobSuspended) })
	if job.Status.StartTime != nil {
		s.t.Errorf("startTime = %v on a Job created suspended, want none", job.Status.StartTime)
	}
	s.consistently("no pod while suspended", func() (bool, string) { return len(s.podsOf(jobName)) == 0, s.describePods(jobName) })

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	s.waitRunning(jobName, 2)
	job = s.waitJob(jobName, "resumed", func(j *batchv1.Job) bool {
		c := j.Status.Conditions
		return len(c) == 1 && c[0].Type == batchv1.JobSuspended && c[0].Status == corev1.ConditionFalse && j.Status.StartTime != nil && j.Status.Active == 2
	})
	if r := job.Status.Conditions[0].Reason; r != "JobResumed" {
		s.t.Errorf("Suspended=False reason = %q, want JobResumed", r)
	}

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	s.waitPods(jobName, "all deleted", func(pods []*corev1.Pod) bool { return len(pods) == 0 })
	job = s.waitJob(jobName, "suspended again", func(j *batchv1.Job) bool {
		return hasCondition(j, batchv1.JobSuspended) && j.Status.Active == 0 && j.Status.StartTime == nil
	})
	if job.Status.Failed != 0 || job.Status.Succeeded != 0 {
		s.t.Errorf("after suspending: failed=%d succeeded=%d, want 0 and 0", job.Status.Failed, job.Status.Succeeded)
	}

	s.succeedAll()
	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	job = s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Conditions: append([]string{"Suspended=False/JobResumed"}, completed...)})
	s.countPods(jobName, 2)
}

// activeDeadlineSeconds 2 with pods that never end: DeadlineExceeded, and the
// deleted running pods are counted as failed.
func activeDeadline(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
	s.createJob(j)
	s.waitRunning(jobName, 2)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Failed: 2, Conditions: failedWith(batchv1.JobReasonDeadlineExceeded)})
	if c := conditionOf(job, batchv1.JobFailed); c == nil || c.Message != "Job was active longer than specified deadline" {
		s.t.Errorf("Failed condition = %+v, want the deadline message", c)
	}
	if d := job.Status.Conditions[0].LastTransitionTime.Sub(job.Status.StartTime.Time); d < 2*time.Second {
		s.t.Errorf("FailureTarget %v after startTime, want at least 2s", d)
	}
}

// Elastic Indexed Job: 4 → 2 trims index 3's completion and deletes index 2's pod;
// 2 → 3 creates index 2 again.
func elasticIndexed(s *scenario) {
	j := s.newJob(jobName, ptr.To[int32](4), ptr.To[int32](4))
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	s.createJob(j)
	pods := s.waitRunning(jobName, 4)
	s.finish(podWithIndex(pods, "0"), succeed)
	s.finish(podWithIndex(pods, "3"), succeed)
	s.waitJob(jobName, `completedIndexes "0,3"`, func(j *batchv1.Job) bool { return j.Status.CompletedIndexes == "0,3" && j.Status.Succeeded == 2 })

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](2), ptr.To[int32](2) })
	s.waitJob(jobName, `scaled down: completedIndexes "0", succeeded 1, active 1`, func(j *batchv1.Job) bool {
		return j.Status.CompletedIndexes == "0" && j.Status.Succeeded == 1 && j.Status.Active == 1
	})
	s.waitPods(jobName, "index 2 gone", func(p []*corev1.Pod) bool { return podWithIndex(p, "2") == nil && len(filter(p, isRunning)) == 1 })

	s.updateJob(jobName, func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3) })
	s.waitRunning(jobName, 2)
	s.succeedAll()
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 3, CompletedIndexes: "0-2", Conditions: completed})
}
