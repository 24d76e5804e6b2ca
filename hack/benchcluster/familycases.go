package main

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
)

// familyPods is the size of every family's Job: 4 pods at once, as in the latency
// model's TestFamilyWrites (reconcile/reconciletest/families_test.go).
const familyPods = 4

// familyExitCode is the exit code the families' podFailurePolicy rules match.
const familyExitCode = 42

// familyCase is one lifecycle family of TestFamilyWrites played on the real control
// plane: the Job's spec and what the benchmark does to it, step by step, once the
// Job exists. kwok starts the pods (Running and ready at once) and stops the deleted
// ones (Failed, 137); every other end of a pod is the benchmark's, written to
// pods/status as a kubelet would (the pods' run-for is an hour, so kwok ends none).
type familyCase struct {
	Name string
	job  func(*batchv1.Job)
	// steps run in turn; each waits for what the controller must have done
	// before the next (a count in the Job's status, a pod released), so that both
	// controllers see the same history.
	steps []familyStep
	// gone: the run ends when the Job is gone and no pod holds the finalizer;
	// otherwise when it is finished (failed: Failed, else Complete) and no pod holds
	// the finalizer.
	gone, failed bool
}

// slug is the family's name in flags and object names: "complete-nonindexed".
func (f familyCase) slug() string { return strings.ReplaceAll(strings.ToLower(f.Name), " ", "-") }

// familyStep is one step of a family's history.
type familyStep struct {
	What string
	Do   func(ctx context.Context, r *familyRun) error
}

// readyStep waits until n pods of the Job run and its status says ready n.
func readyStep(n int32) familyStep {
	return familyStep{What: fmt.Sprintf("%d pods running, status.ready %d", n, n), Do: func(ctx context.Context, r *familyRun) error {
		return r.waitJob(ctx, func(j *batchv1.Job, pods []corev1.Pod) bool {
			return ptr.Deref(j.Status.Ready, 0) == n && countRunning(pods) == int(n)
		})
	}}
}

// finishStep ends the running pods of the Job: end(position) is the exit code of the
// pod at that position (its completion index, or its rank by name without one), 0
// to succeed, -1 to leave it running. The failures are written before the successes
// (no failure later than the last success: no backoff after it).
func finishStep(what string, end func(position int) int32) familyStep {
	return familyStep{What: what, Do: func(ctx context.Context, r *familyRun) error { return r.finish(ctx, end) }}
}

func succeedAll(int) int32 { return 0 }

// failFirst fails the pods at positions below n with code; the others succeed.
func failFirst(n int, code int32) func(int) int32 {
	return func(pos int) int32 {
		if pos < n {
			return code
		}
		return 0
	}
}

// patchJobStep merge-patches the Job (the benchmark's own write, not counted).
func patchJobStep(what, patch string) familyStep {
	return familyStep{What: what, Do: func(ctx context.Context, r *familyRun) error { return r.patchJob(ctx, patch) }}
}

func familyIndexed(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) }

func familyPerIndex(j *batchv1.Job) {
	familyIndexed(j)
	j.Spec.BackoffLimit = nil
	j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
}

func onExit(action batchv1.PodFailurePolicyAction) *batchv1.PodFailurePolicy {
	return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      action,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{familyExitCode}},
	}}}
}

// families are TestFamilyWrites' families with the same histories.
var families = []familyCase{
	{Name: "complete NonIndexed", steps: []familyStep{readyStep(4), finishStep("all succeed", succeedAll)}},
	{Name: "complete Indexed", job: familyIndexed, steps: []familyStep{readyStep(4), finishStep("all succeed", succeedAll)}},
	{Name: "retries with backoff", steps: []familyStep{readyStep(4),
		finishStep("two fail (exit 1), two succeed", failFirst(2, 1)), readyStep(2), finishStep("the replacements succeed", succeedAll)}},
	{Name: "backoffLimitPerIndex", job: familyPerIndex, steps: []familyStep{readyStep(4),
		finishStep("indexes 0 and 1 fail (exit 1), 2 and 3 succeed", failFirst(2, 1)), readyStep(2), finishStep("the replacements succeed", succeedAll)}},
	{Name: "podFailurePolicy FailJob", failed: true, job: func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = onExit(batchv1.PodFailurePolicyActionFailJob)
	}, steps: []familyStep{readyStep(4), finishStep("one fails with 42", func(pos int) int32 {
		if pos == 0 {
			return familyExitCode
		}
		return -1
	})}},
	{Name: "podFailurePolicy FailIndex", failed: true, job: func(j *batchv1.Job) {
		familyPerIndex(j)
		j.Spec.PodFailurePolicy = onExit(batchv1.PodFailurePolicyActionFailIndex)
	}, steps: []familyStep{readyStep(4), finishStep("index 0 fails with 42, the others succeed", failFirst(1, familyExitCode))}},
	{Name: "podFailurePolicy Ignore", job: func(j *batchv1.Job) {
		j.Spec.PodFailurePolicy = onExit(batchv1.PodFailurePolicyActionIgnore)
	}, steps: []familyStep{readyStep(4), finishStep("two fail with 42, two succeed", failFirst(2, familyExitCode)),
		readyStep(2), finishStep("the replacements succeed", succeedAll)}},
	{Name: "successPolicy", job: func(j *batchv1.Job) {
		familyIndexed(j)
		j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	}, steps: []familyStep{readyStep(4), finishStep("index 0 succeeds", func(pos int) int32 {
		if pos == 0 {
			return 0
		}
		return -1
	})}},
	{Name: "suspend and resume", steps: []familyStep{readyStep(4),
		patchJobStep("suspended", `{"spec":{"suspend":true}}`),
		{What: "Suspended, no pod active or terminating, no finalizer left", Do: func(ctx context.Context, r *familyRun) error {
			return r.waitJob(ctx, func(j *batchv1.Job, pods []corev1.Pod) bool {
				return conditionTrue(j, batchv1.JobSuspended) && j.Status.Active == 0 && ptr.Deref(j.Status.Terminating, 0) == 0 && held(pods) == 0
			})
		}},
		patchJobStep("resumed", `{"spec":{"suspend":false}}`), readyStep(4), finishStep("all succeed", succeedAll)}},
	{Name: "deletion while running", gone: true, steps: []familyStep{readyStep(4),
		{What: "the Job deleted, then its pods (the garbage collector's part)", Do: func(ctx context.Context, r *familyRun) error { return r.deleteJob(ctx) }}}},
	{Name: "released pod", job: familyIndexed, steps: []familyStep{readyStep(4),
		{What: "index 1 relabelled out of the selector", Do: func(ctx context.Context, r *familyRun) error { return r.release(ctx, 1) }},
		{What: "released (no owner, no finalizer), its replacement running, status.ready 4", Do: func(ctx context.Context, r *familyRun) error {
			return r.waitJob(ctx, func(j *batchv1.Job, pods []corev1.Pod) bool {
				return r.releasedDone() && ptr.Deref(j.Status.Ready, 0) == familyPods && countRunning(pods) == familyPods
			})
		}},
		finishStep("all succeed", succeedAll)}},
	{Name: "parallelism change", steps: []familyStep{readyStep(4),
		patchJobStep("parallelism 2", `{"spec":{"parallelism":2}}`),
		{What: "two pods deleted and gone from the count: active 2, ready 2, terminating 0", Do: func(ctx context.Context, r *familyRun) error {
			return r.waitJob(ctx, func(j *batchv1.Job, pods []corev1.Pod) bool {
				deleting := 0
				for _, p := range pods {
					if p.DeletionTimestamp != nil {
						deleting += held([]corev1.Pod{p})
					}
				}
				return j.Status.Active == 2 && ptr.Deref(j.Status.Ready, 0) == 2 && ptr.Deref(j.Status.Terminating, 0) == 0 &&
					countRunning(pods) == 2 && deleting == 0
			})
		}},
		patchJobStep("parallelism 4", `{"spec":{"parallelism":4}}`), readyStep(4), finishStep("all succeed", succeedAll)}},
	{Name: "activeDeadlineSeconds", failed: true, job: func(j *batchv1.Job) {
		j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5)
	}, steps: []familyStep{readyStep(4)}},
}

// object is the family's Job named name in namespace for the controller managedBy
// (empty: the Kubernetes Job controller), its pods on node.
func (f familyCase) object(name, namespace, managedBy, node string) *batchv1.Job {
	labels := map[string]string{"jobkit.dev/bench": name}
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](familyPods),
			Parallelism: ptr.To[int32](familyPods),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{annotationRunFor: "1h"}},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					NodeName:                      node,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1"}},
				},
			},
		},
	}
	if managedBy != "" {
		j.Spec.ManagedBy = ptr.To(managedBy)
	}
	if f.job != nil {
		f.job(j)
	}
	return j
}

func conditionTrue(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// countRunning counts the pods in phase Running not being deleted.
func countRunning(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			n++
		}
	}
	return n
}

// held counts the pods that hold the Job tracking finalizer.
func held(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if owner.BatchJob.HasFinalizer(&pods[i]) {
			n++
		}
	}
	return n
}
