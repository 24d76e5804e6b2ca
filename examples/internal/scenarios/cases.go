package scenarios

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
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
