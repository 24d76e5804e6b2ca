package plan_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/reconcile"
)

// succeedAll runs pending pods and lets running pods succeed on the next step.
func succeedAll(s *scenario) {
	for _, p := range s.active() {
		if p.Status.Phase == corev1.PodRunning {
			s.succeed(p)
		} else {
			s.start(p)
		}
	}
}

func TestScenarioNonIndexedToCompletion(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](2)})
	got := s.untilFinished(30, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, int32(5), s.job().Status.Succeeded)
	assert.Equal(t, int32(0), s.job().Status.Failed)
	assert.Equal(t, 5, s.created, "pods created")
	assert.NotNil(t, s.job().Status.CompletionTime)
	assert.True(t, !s.job().Status.CompletionTime.Before(s.job().Status.StartTime))
}

func TestScenarioWorkQueueToCompletion(t *testing.T) {
	// No completions: done once one pod succeeded and the others are gone.
	s := newScenario(t, batchv1.JobSpec{Parallelism: ptr.To[int32](3)})
	step := 0
	got := s.untilFinished(30, func(s *scenario) {
		step++
		s.runAll()
		if step == 2 {
			s.succeed(s.active()[0])
		}
		if step == 4 {
			for _, p := range s.active() {
				s.succeed(p)
			}
		}
	})
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, int32(3), s.job().Status.Succeeded)
	assert.Equal(t, 3, s.created, "no pod is replaced after the first success")
}

func TestScenarioIndexedToCompletion(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](6), Parallelism: ptr.To[int32](3), CompletionMode: ptr.To(batchv1.IndexedCompletion)})
	got := s.untilFinished(30, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, "0-5", s.job().Status.CompletedIndexes)
	assert.Equal(t, int32(6), s.job().Status.Succeeded)
	assert.Equal(t, 6, s.created)
}

func TestScenarioBackoffLimitExceeded(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](2)})
	var waits []time.Duration
	got := s.untilFinished(40, func(s *scenario) {
		if s.lastPlan.RequeueAfter > 0 {
			waits = append(waits, s.lastPlan.RequeueAfter)
		}
		for _, p := range s.active() {
			if p.Status.Phase == corev1.PodRunning {
				s.fail(p, 1)
			} else {
				s.start(p)
			}
		}
	})
	require.Equal(t, batchv1.JobFailed, got)
	s.assertDone(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
	assert.Equal(t, int32(3), s.job().Status.Failed, "backoffLimit 2 fails on the third failure")
	assert.Equal(t, 3, s.created)
	// Replacements waited 10s, then 20s, measured from the failure (the harness syncs
	// one second after the kubelet acts).
	assert.Equal(t, []time.Duration{9 * time.Second, 19 * time.Second}, waits)
}

func TestScenarioPodFailurePolicyEachAction(t *testing.T) {
	policy := &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionCount, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}}},
	}}
	t.Run("Ignore then Count then success", func(t *testing.T) {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](1), PodFailurePolicy: policy})
		got := s.untilFinished(60, func(s *scenario) {
			for _, p := range s.active() {
				if p.Status.Phase == corev1.PodPending {
					s.start(p)
					continue
				}
				switch s.created {
				case 1, 2, 3:
					s.evict(p) // ignored: never counted, never exhausts backoffLimit 1
				case 4:
					s.fail(p, 1) // counted
				default:
					s.succeed(p)
				}
			}
		})
		require.Equal(t, batchv1.JobComplete, got)
		s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
		assert.Equal(t, int32(1), s.job().Status.Failed, "evictions are ignored, exit code 1 counts")
		assert.Equal(t, int32(1), s.job().Status.Succeeded)
		assert.Equal(t, 5, s.created)
	})
	t.Run("FailJob", func(t *testing.T) {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](3), PodFailurePolicy: policy})
		step := 0
		got := s.untilFinished(20, func(s *scenario) {
			step++
			s.runAll()
			if step == 2 {
				s.fail(s.active()[0], 42)
			}
		})
		require.Equal(t, batchv1.JobFailed, got)
		s.assertDone(batchv1.JobFailed, batchv1.JobReasonPodFailurePolicy)
		cond := findCond(s.job(), batchv1.JobFailed)
		assert.Contains(t, cond.Message, "failed with exit code 42 matching FailJob rule at index 1")
		// The two running pods were deleted when the Job failed: counted as failed.
		assert.Equal(t, int32(3), s.job().Status.Failed)
	})
}

func findCond(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

func TestScenarioBackoffLimitPerIndexWithMaxFailedIndexes(t *testing.T) {
	t.Run("failed indexes finish the job", func(t *testing.T) {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](4), Parallelism: ptr.To[int32](4), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			BackoffLimitPerIndex: ptr.To[int32](1), MaxFailedIndexes: ptr.To[int32](2)})
		got := s.untilFinished(60, func(s *scenario) {
			for _, p := range s.active() {
				if p.Status.Phase == corev1.PodPending {
					s.start(p)
					continue
				}
				ix, _ := indexes.PodIndex(owner.BatchJob, p)
				if ix == 1 {
					s.fail(p, 1) // index 1 always fails: two tries, then failed
				} else {
					s.succeed(p)
				}
			}
		})
		require.Equal(t, batchv1.JobFailed, got)
		s.assertDone(batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
		assert.Equal(t, "1", ptr.Deref(s.job().Status.FailedIndexes, "<nil>"))
		assert.Equal(t, "0,2,3", s.job().Status.CompletedIndexes)
		assert.Equal(t, int32(2), s.job().Status.Failed)
		assert.Equal(t, 5, s.created, "index 1 was retried once")
	})
	t.Run("too many failed indexes", func(t *testing.T) {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](5), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			BackoffLimitPerIndex: ptr.To[int32](0), MaxFailedIndexes: ptr.To[int32](1)})
		got := s.untilFinished(30, func(s *scenario) {
			for _, p := range s.active() {
				if p.Status.Phase == corev1.PodPending {
					s.start(p)
					continue
				}
				if ix, _ := indexes.PodIndex(owner.BatchJob, p); ix < 2 {
					s.fail(p, 1)
				}
			}
		})
		require.Equal(t, batchv1.JobFailed, got)
		s.assertDone(batchv1.JobFailed, batchv1.JobReasonMaxFailedIndexesExceeded)
		assert.Equal(t, "0,1", ptr.Deref(s.job().Status.FailedIndexes, ""))
	})
	t.Run("replacement carries the failure count", func(t *testing.T) {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), CompletionMode: ptr.To(batchv1.IndexedCompletion),
			BackoffLimitPerIndex: ptr.To[int32](3)})
		s.sync()
		s.start(s.active()[0])
		s.fail(s.active()[0], 1)
		p := s.sync()
		assert.Empty(t, p.Create, "the replacement waits for the per-index backoff")
		assert.Equal(t, 10*time.Second, p.RequeueAfter)
		assert.Empty(t, p.RemoveFinalizers, "the failed pod keeps its finalizer until replaced")
		s.advance(10 * time.Second)
		p = s.sync()
		require.Len(t, p.Create, 1)
		assert.Equal(t, "1", p.Create[0].Pod.Annotations[batchv1.JobIndexFailureCountAnnotation])
		p = s.sync()
		assert.Len(t, p.RemoveFinalizers, 1, "once replaced, the failed pod loses its finalizer")
	})
}

func TestScenarioSuccessPolicy(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](5), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}})
	step := 0
	got := s.untilFinished(20, func(s *scenario) {
		step++
		s.runAll()
		if step == 2 {
			s.succeed(s.byIndex(0)) // the leader succeeded: the job is done
		}
	})
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
	assert.Equal(t, "Matched rules at index 0", findCond(s.job(), batchv1.JobComplete).Message)
	assert.Equal(t, "0", s.job().Status.CompletedIndexes)
	assert.Equal(t, int32(0), s.job().Status.Failed, "the workers deleted on success are not failures")
}

func TestScenarioSuspendResume(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](4), Parallelism: ptr.To[int32](2)})
	s.sync()
	s.runAll()
	s.sync()
	require.Len(t, s.active(), 2)
	require.NotNil(t, s.job().Status.StartTime)

	s.update(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	s.advance(time.Minute)
	p := s.sync()
	assert.Len(t, p.Delete, 2)
	for _, d := range p.Delete {
		assert.True(t, d.RemoveFinalizerFirst, "suspend removes the finalizer first so the pod is not counted")
	}
	cond := findCond(s.job(), batchv1.JobSuspended)
	require.NotNil(t, cond)
	assert.Equal(t, corev1.ConditionTrue, cond.Status)
	assert.Equal(t, "JobSuspended", cond.Reason)
	assert.Nil(t, s.job().Status.StartTime, "suspending clears startTime")
	s.finishTerminating()
	s.sync()
	assert.Equal(t, int32(0), s.job().Status.Failed, "pods removed by suspend are not failures")

	s.update(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(false) })
	s.advance(time.Minute)
	p = s.sync()
	assert.Len(t, p.Create, 2)
	cond = findCond(s.job(), batchv1.JobSuspended)
	assert.Equal(t, corev1.ConditionFalse, cond.Status)
	assert.Equal(t, "JobResumed", cond.Reason)
	require.NotNil(t, s.job().Status.StartTime)
	assert.True(t, s.job().Status.StartTime.Time.Equal(s.now()), "resuming sets a new startTime")

	got := s.untilFinished(30, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, int32(4), s.job().Status.Succeeded)
}

func TestScenarioElasticIndexed(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](6), Parallelism: ptr.To[int32](6), CompletionMode: ptr.To(batchv1.IndexedCompletion)})
	s.sync()
	s.runAll()
	for _, ix := range []int{0, 4, 5} {
		s.succeed(s.byIndex(ix))
	}
	s.sync()
	require.Equal(t, "0,4,5", s.job().Status.CompletedIndexes)

	// Scale down to 3: indexes 4 and 5 fall out of range.
	s.update(func(j *batchv1.Job) {
		j.Spec.Completions = ptr.To[int32](3)
		j.Spec.Parallelism = ptr.To[int32](3)
	})
	s.elasticOK = true
	p := s.sync()
	assert.Equal(t, "0", s.job().Status.CompletedIndexes, "completed indexes trimmed")
	assert.Equal(t, int32(1), s.job().Status.Succeeded, "succeeded lowered with them")
	var removed []int
	for _, d := range p.Delete {
		ix, _ := indexes.PodIndex(owner.BatchJob, d.Pod)
		removed = append(removed, ix)
	}
	assert.ElementsMatch(t, []int{3}, removed, "the active pod of index 3 is out of range")

	got := s.untilFinished(30, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, "0-2", s.job().Status.CompletedIndexes)
	assert.Equal(t, int32(3), s.job().Status.Succeeded)
}

func TestScenarioActiveDeadline(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2), ActiveDeadlineSeconds: ptr.To[int64](60)})
	p := s.sync()
	assert.Equal(t, 60*time.Second, p.RequeueAfter, "requeued exactly at the deadline")
	s.runAll()
	s.advance(30 * time.Second)
	p = s.sync()
	assert.Equal(t, 30*time.Second, p.RequeueAfter)
	s.advance(30 * time.Second)
	got := s.untilFinished(10, func(s *scenario) {})
	require.Equal(t, batchv1.JobFailed, got)
	s.assertDone(batchv1.JobFailed, batchv1.JobReasonDeadlineExceeded)
	assert.Equal(t, "Job was active longer than specified deadline", findCond(s.job(), batchv1.JobFailed).Message)
	assert.Equal(t, int32(2), s.job().Status.Failed, "running pods deleted at the deadline count as failed")
}

func TestScenarioOnFailureRestarts(t *testing.T) {
	for _, limit := range []int32{0, 2} {
		s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To(limit),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure}}})
		restarts := 0
		got := s.untilFinished(20, func(s *scenario) {
			s.runAll()
			for _, p := range s.active() {
				s.restartContainer(p)
				restarts++
			}
		})
		require.Equal(t, batchv1.JobFailed, got, "limit %d", limit)
		s.assertDone(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
		want := max(1, int(limit))
		assert.Equal(t, want, restarts, "limit %d: fails after %d restarts", limit, want)
	}
}

func TestScenarioPodReplacementPolicyFailed(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2), PodReplacementPolicy: ptr.To(batchv1.Failed)})
	s.sync()
	s.runAll()
	s.sync()
	victim := s.active()[0]
	s.deletePod(victim) // someone else deletes it; it terminates slowly
	p := s.sync()
	assert.Empty(t, p.Create, "a terminating pod is not replaced until it is Failed")
	assert.Equal(t, int32(1), ptr.Deref(s.job().Status.Terminating, 0))
	assert.Equal(t, int32(0), s.job().Status.Failed, "not failed while terminating under policy Failed")
	s.finishTerminating()
	p = s.sync()
	assert.Empty(t, p.Create, "the failure starts the backoff")
	assert.Equal(t, int32(1), s.job().Status.Failed, "counted once Failed")
	s.advance(p.RequeueAfter)
	p = s.sync()
	assert.Len(t, p.Create, 1, "replaced once Failed and the backoff passed")
	got := s.untilFinished(30, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, int32(1), s.job().Status.Failed)
	assert.Equal(t, int32(2), s.job().Status.Succeeded)
}

func TestScenarioScaleParallelism(t *testing.T) {
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](10), Parallelism: ptr.To[int32](4)})
	s.sync()
	s.runAll()
	s.sync()
	require.Len(t, s.active(), 4)
	s.update(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](1) })
	p := s.sync()
	assert.Len(t, p.Delete, 3)
	assert.Empty(t, p.Create, "never create and delete in one sync")
	s.finishTerminating()
	s.sync()
	assert.Equal(t, int32(0), s.job().Status.Failed, "scale-down removals are not failures")
	s.update(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) })
	got := s.untilFinished(60, succeedAll)
	require.Equal(t, batchv1.JobComplete, got)
	s.assertDone(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
	assert.Equal(t, int32(10), s.job().Status.Succeeded)
}

func TestScenarioLargeNonIndexedUsesTheLedgerCap(t *testing.T) {
	// 1,200 pods succeeding at once pass through uncountedTerminatedPods 500 at a time.
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](1200), Parallelism: ptr.To[int32](1200)},
		func(c *reconcile.Config) { c.MaxCreatesPerSync = 1200 })
	s.sync()
	s.runAll()
	for _, p := range s.active() {
		s.succeed(p)
	}
	syncs := 0
	for !isFinished(s.job()) && syncs < 10 {
		s.sync()
		syncs++
		if u := s.job().Status.UncountedTerminatedPods; u != nil {
			assert.LessOrEqual(t, len(u.Succeeded)+len(u.Failed), 500)
		}
	}
	require.True(t, isFinished(s.job()))
	assert.Equal(t, int32(1200), s.job().Status.Succeeded)
	assert.Equal(t, 3, syncs, "500 + 500 + 200")
}

func isFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func TestScenarioPodFailurePolicyFailIndex(t *testing.T) {
	// Exit code 3 means the index's input is bad: fail that index at once, without
	// retrying it, and let the other indexes finish.
	s := newScenario(t, batchv1.JobSpec{Completions: ptr.To[int32](4), Parallelism: ptr.To[int32](4), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		BackoffLimitPerIndex: ptr.To[int32](5),
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailIndex,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}},
		}}}})
	got := s.untilFinished(30, func(s *scenario) {
		for _, p := range s.active() {
			if p.Status.Phase == corev1.PodPending {
				s.start(p)
				continue
			}
			if ix, _ := indexes.PodIndex(owner.BatchJob, p); ix == 2 {
				s.fail(p, 3)
			} else {
				s.succeed(p)
			}
		}
	})
	require.Equal(t, batchv1.JobFailed, got)
	s.assertDone(batchv1.JobFailed, batchv1.JobReasonFailedIndexes)
	assert.Equal(t, "2", ptr.Deref(s.job().Status.FailedIndexes, ""))
	assert.Equal(t, "0,1,3", s.job().Status.CompletedIndexes)
	assert.Equal(t, 4, s.created, "a FailIndex match is not retried despite backoffLimitPerIndex 5")
	assert.Equal(t, int32(1), s.job().Status.Failed)
}
