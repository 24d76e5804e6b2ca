package scenarios

import (
	"fmt"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// all lists the scenarios Run runs.
var all = []struct {
	name string
	run  func(*scenario)
}{
	{"NonIndexedCompletion", nonIndexedCompletion},
	{"IndexedCompletion", indexedCompletion},
	{"ParallelismScaleUpAndDown", scaleUpAndDown},
	{"SuspendAndResume", suspendAndResume},
	{"BackoffLimitExceeded", backoffLimitExceeded},
	{"PodFailurePolicy/FailJob", podFailurePolicyFailJob},
	{"PodFailurePolicy/IgnoreDisruption", podFailurePolicyIgnore},
	{"PodFailurePolicy/FailIndex", podFailurePolicyFailIndex},
	{"BackoffLimitPerIndex/MaxFailedIndexes", backoffLimitPerIndex},
	{"SuccessPolicy", successPolicy},
	{"PodReplacementPolicyFailed", podReplacementPolicyFailed},
	{"ActiveDeadlineSeconds", activeDeadline},
	{"ElasticIndexedCompletions", elasticIndexed},
	{"OrphanFinalizersRemovedAfterJobDeletion", orphansAfterDeletion},
	{"RecreatedJobStartsFresh", recreatedJob},
	{"AdoptedOrphansCountedWithoutConflicts", adoptedOrphans},
	{"ReleaseInOnePatch", releaseInOnePatch},
	{"ControllerRestartMidJob", controllerRestart},
	{"OtherManagedByLeftAlone", otherManagedBy},
}

const jobName = "job"

// expect compares the final status of a Job with want and checks the invariants of a
// finished Job: no uncounted pods, no pod of it still carrying the tracking
// finalizer.
func (s *scenario) expect(job *batchv1.Job, want finalStatus) {
	s.t.Helper()
	if diff := cmp.Diff(want, statusOf(job)); diff != "" {
		s.t.Errorf("final status of Job %s (-want +got):\n%s\n%s", job.Name, diff, describeJob(job))
	}
	if u := job.Status.UncountedTerminatedPods; u != nil && len(u.Succeeded)+len(u.Failed) > 0 {
		s.t.Errorf("uncountedTerminatedPods = %+v after the Job finished, want empty", *u)
	}
	if hasCondition(job, batchv1.JobComplete) && job.Status.CompletionTime == nil {
		s.t.Errorf("Complete Job has no completionTime")
	}
	s.eventually("no pod of "+job.Name+" keeps the tracking finalizer", func() (bool, string) {
		return len(filter(s.podsOf(job.Name), hasFinalizer)) == 0, s.describePods(job.Name)
	})
}

func cond(t batchv1.JobConditionType, reason string) string {
	return fmt.Sprintf("%s=True/%s", t, reason)
}

var (
	completed = []string{cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached), cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)}
)

func failedWith(reason string) []string {
	return []string{cond(batchv1.JobFailureTarget, reason), cond(batchv1.JobFailed, reason)}
}

// countPods checks how many pods the Job name has in the API.
func (s *scenario) countPods(name string, want int) {
	s.t.Helper()
	if got := len(s.podsOf(name)); got != want {
		s.t.Errorf("Job %s has %d pods, want %d:\n%s", name, got, want, s.describePods(name))
	}
}

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

// A Job deleted with propagationPolicy Background leaves its pods (no garbage
// collector here); the orphan cleanup removes their tracking finalizer.
func orphansAfterDeletion(s *scenario) {
	s.createJob(s.newJob(jobName, ptr.To[int32](3), ptr.To[int32](2)))
	pods := s.waitRunning(jobName, 2)
	s.finish(pods[0], succeed) // one finished, still uncounted or counted: both must go
	s.deleteJob(jobName)
	s.waitPods(jobName, "no tracking finalizer left", func(p []*corev1.Pod) bool {
		return len(p) >= 2 && len(filter(p, hasFinalizer)) == 0
	})
}

// A Job deleted and recreated under the same name starts fresh: new pods, counters
// from zero, nothing inherited from the old Job's pods or expectations.
func recreatedJob(s *scenario) {
	old := s.createJob(s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1)))
	oldPods := s.waitRunning(jobName, 1)
	s.deleteJob(jobName)
	cur := s.createJob(s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1)))
	s.waitPods(jobName, "a pod of the new Job", func(p []*corev1.Pod) bool {
		for _, pod := range p {
			if ownerUID(pod) == cur.UID && isRunning(pod) {
				return true
			}
		}
		return false
	})
	s.succeedAll() // the old pod is running too and succeeds; it must not count
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 1, Conditions: completed})
	var owners []string
	for _, p := range s.podsOf(jobName) {
		owners = append(owners, string(ownerUID(p)))
	}
	slices.Sort(owners)
	want := []string{string(old.UID), string(cur.UID)}
	slices.Sort(want)
	if !slices.Equal(owners, want) {
		s.t.Errorf("pod owners = %v, want one pod of the old Job (%s) and one of the new (%s)", owners, old.UID, cur.UID)
	}
	if len(oldPods) != 1 || ownerUID(oldPods[0]) != old.UID {
		s.t.Errorf("pods of the first Job = %d, want 1 owned by %s", len(oldPods), old.UID)
	}
}

// The controller stops while one pod has succeeded and another has failed without
// being counted; a new controller (new process state) counts them exactly once.
func controllerRestart(s *scenario) {
	s.createJob(s.newJob(jobName, ptr.To[int32](4), ptr.To[int32](2)))
	pods := s.waitRunning(jobName, 2)
	s.finish(pods[0], succeed)
	s.waitJob(jobName, "succeeded=1", func(j *batchv1.Job) bool { return j.Status.Succeeded == 1 })
	running := s.waitRunning(jobName, 2)

	s.stopController()
	s.finish(running[0], succeed)
	s.finish(running[1], failWith(1))
	s.consistently("nothing counted while stopped", func() (bool, string) {
		j := s.getJob(jobName)
		return j.Status.Succeeded == 1 && j.Status.Failed == 0 && len(s.podsOf(jobName)) == 3, describeJob(j)
	})

	s.succeedAll()
	s.startController()
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 4, Failed: 1, Conditions: completed})
	s.countPods(jobName, 5)
}

// A Job whose managedBy names another controller gets no pods and no status, and the
// tracking finalizer of a pod it owns stays.
func otherManagedBy(s *scenario) {
	s.noControl = true
	j := s.newJob(jobName, ptr.To[int32](1), ptr.To[int32](1))
	j.Spec.ManagedBy = ptr.To("example.com/another-controller")
	job := s.createJob(j)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.ns, Name: "theirs",
			Labels:          job.Spec.Template.Labels,
			Finalizers:      []string{batchv1.JobTrackingFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		},
		Spec: job.Spec.Template.Spec,
	}
	if _, err := s.cs.CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create pod: %v", err)
	}
	s.succeedAll() // the pod finishes: a finished pod of someone else's Job
	s.consistently("the Job and its pod left alone", func() (bool, string) {
		j := s.getJob(jobName)
		pods := s.podsOf(jobName)
		ok := j.ResourceVersion == job.ResourceVersion && len(pods) == 1 && hasFinalizer(pods[0])
		return ok, describeJob(j) + "\n" + s.describePods(jobName)
	})
	if accepted, _ := s.writes.counts(); accepted != 0 {
		s.t.Errorf("%d status writes by the controller, want none", accepted)
	}
}

// Finished orphan pods matching a Job's manual selector (as a Job deleted with the
// Orphan propagation leaves them, and a Job recreated with the same selector finds
// them) are adopted and counted: per pod one adoption patch and one finalizer
// removal, which carries the resourceVersion the adoption returned, so no 409.
func adoptedOrphans(s *scenario) {
	labels := map[string]string{"app": "adopt", batchv1.JobNameLabel: jobName}
	var orphans []*corev1.Pod
	for range 2 {
		pod, err := s.cs.CoreV1().Pods(s.ns).Create(s.ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, GenerateName: "orphan-", Labels: labels},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			s.t.Fatalf("create orphan pod: %v", err)
		}
		orphans = append(orphans, pod)
	}
	for _, p := range s.waitRunning(jobName, len(orphans)) {
		s.finish(p, succeed)
	}
	s.waitPods(jobName, "orphans succeeded", func(p []*corev1.Pod) bool {
		return len(filter(p, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })) == len(orphans)
	})
	s.consistently("orphans without a Job left alone", func() (bool, string) {
		for _, p := range s.podsOf(jobName) {
			if ownerUID(p) != "" || s.patches.of(s.ns, p.Name) != (patchCount{}) {
				return false, s.describePods(jobName)
			}
		}
		return true, ""
	})

	j := s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2))
	j.Spec.ManualSelector = ptr.To(true)
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "adopt"}}
	j.Spec.Template.Labels = labels
	cur := s.createJob(j)
	job := s.waitFinished(jobName)
	s.expect(job, finalStatus{Succeeded: 2, Conditions: completed})
	s.countPods(jobName, len(orphans)) // nothing created: the orphans were enough
	for _, p := range s.podsOf(jobName) {
		if ownerUID(p) != cur.UID {
			s.t.Errorf("pod %s: controller %q, want the Job %s", p.Name, ownerUID(p), cur.UID)
		}
		if got, want := s.patches.of(s.ns, p.Name), (patchCount{Patches: 2}); got != want {
			s.t.Errorf("controller patches of pod %s = %+v, want %+v (one adoption, one finalizer removal)", p.Name, got, want)
		}
	}
}

// A running pod whose labels stop matching its Job's selector is released in one
// patch, which removes the controller reference and the tracking finalizer (as the
// Job controller does): the orphan cleanup has nothing left to do, and the released
// pod, which succeeds later, is never counted.
func releaseInOnePatch(s *scenario) {
	job := s.createJob(s.newJob(jobName, ptr.To[int32](2), ptr.To[int32](2)))
	moved := s.waitRunning(jobName, 2)[0]
	_, err := s.cs.CoreV1().Pods(s.ns).Patch(s.ctx, moved.Name, types.StrategicMergePatchType,
		[]byte(`{"metadata":{"labels":{"`+batchv1.ControllerUidLabel+`":"released"}}}`), metav1.PatchOptions{})
	if err != nil {
		s.t.Fatalf("relabel pod %s: %v", moved.Name, err)
	}
	s.waitPods(jobName, "pod "+moved.Name+" released", func(pods []*corev1.Pod) bool {
		for _, p := range pods {
			if p.UID == moved.UID {
				return ownerUID(p) == "" && !hasFinalizer(p)
			}
		}
		return false
	})
	s.consistently("one patch for the released pod", func() (bool, string) {
		got := s.patches.of(s.ns, moved.Name)
		return got == patchCount{Patches: 1}, fmt.Sprintf("controller patches of pod %s = %+v, want one, no Conflict", moved.Name, got)
	})
	s.succeedAll() // the released pod succeeds too: it must not count
	done := s.waitFinished(jobName)
	s.expect(done, finalStatus{Succeeded: 2, Conditions: completed})
	for _, p := range s.podsOf(jobName) {
		if p.UID != moved.UID && ownerUID(p) != job.UID {
			s.t.Errorf("pod %s: controller %q, want the Job %s", p.Name, ownerUID(p), job.UID)
		}
	}
	if got := s.patches.of(s.ns, moved.Name); got != (patchCount{Patches: 1}) {
		s.t.Errorf("controller patches of the released pod %s = %+v after the Job finished, want one", moved.Name, got)
	}
}
