package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The labels of the chaos run's Jobs and pods, and the annotation that kwok reads for
// a pod's running time.
const (
	labelChaos         = "jobkit.dev/chaos"
	annotationRunFor   = "kwok.jobkit.dev/run-for"
	annotationAttempts = "kwok.jobkit.dev/fail-attempts"
	chaosFailCode      = 42 // the exit code the podFailurePolicy rules match
	chaosPlainFailCode = 1  // an exit code no rule matches
)

// shape is the kind of a chaos Job: what its pods do and how it should end.
type shape string

const (
	shapeComplete  shape = "complete"    // every pod succeeds
	shapeRetry     shape = "retry-index" // Indexed, backoffLimitPerIndex: some indexes fail once, then succeed
	shapeFailIndex shape = "fail-index"  // Indexed, podFailurePolicy FailIndex: some indexes fail for good
	shapeFailJob   shape = "fail-job"    // podFailurePolicy FailJob on the first failure
	shapeBackoff   shape = "backoff"     // NonIndexed, every pod fails: backoffLimit exceeded
	shapeSuspend   shape = "suspend"     // suspended while running, resumed later, then completes
	shapeDelete    shape = "delete"      // deleted while running
)

var shapes = []shape{shapeComplete, shapeRetry, shapeFailIndex, shapeFailJob, shapeBackoff, shapeSuspend, shapeDelete}

// chaosJob is one Job of a chaos run and what the driver does to it.
type chaosJob struct {
	Name        string
	Shape       shape
	Indexed     bool
	Completions int32
	Parallelism int32
	RunFor      time.Duration // each pod's time from Running to its end
	FailEvery   int           // indexes i with i % FailEvery == 0 fail (0: none fail)
	// At is when the driver creates the Job, from the start of the run.
	At time.Duration
	// ActAfter is when the driver suspends (shapeSuspend) or deletes (shapeDelete) the
	// Job, from its creation; ResumeAfter when it resumes it, from the suspension.
	ActAfter, ResumeAfter time.Duration
}

// wantCondition is the finished condition the Job must end with; empty for a Job
// the driver deletes.
func (j chaosJob) wantCondition() batchv1.JobConditionType {
	switch j.Shape {
	case shapeFailIndex, shapeFailJob, shapeBackoff:
		return batchv1.JobFailed
	case shapeDelete:
		return ""
	}
	return batchv1.JobComplete
}

// chaosPlan draws n Jobs from seed, created over spread: every shape in turn (so that
// each appears), sizes, run times and moments drawn.
func chaosPlan(seed uint64, n int, spread time.Duration) []chaosJob {
	r := rand.New(rand.NewPCG(seed, 0x6a6f626b6974))
	dur := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(r.Int64N(int64(hi-lo)+1)) }
	jobs := make([]chaosJob, n)
	for i := range jobs {
		s := shapes[i%len(shapes)]
		j := chaosJob{Name: fmt.Sprintf("c%03d-%s", i, s), Shape: s, Indexed: r.IntN(2) == 0}
		j.Completions = int32(1 + r.IntN(12))
		j.Parallelism = int32(1 + r.IntN(int(j.Completions)))
		j.RunFor = dur(0, 3*time.Second)
		j.At = dur(0, spread)
		switch s {
		case shapeRetry, shapeFailIndex:
			j.Indexed = true
			j.FailEvery = 2 + r.IntN(3)
		case shapeFailJob:
			j.FailEvery = 2 + r.IntN(3)
			if !j.Indexed {
				j.FailEvery = 1 // no index: every pod fails
			}
		case shapeBackoff:
			j.Indexed, j.FailEvery = false, 1
		case shapeSuspend:
			j.RunFor = dur(2*time.Second, 5*time.Second)
			j.ActAfter = dur(500*time.Millisecond, 3*time.Second)
			j.ResumeAfter = dur(time.Second, 4*time.Second)
		case shapeDelete:
			j.RunFor = dur(3*time.Second, 8*time.Second)
			j.ActAfter = dur(500*time.Millisecond, 4*time.Second)
		}
		jobs[i] = j
	}
	return jobs
}

// object is the batch/v1 Job of j in namespace, for the controller managedBy, its
// pods on node.
func (j chaosJob) object(namespace, managedBy, node string) *batchv1.Job {
	labels := map[string]string{labelChaos: j.Name}
	annotations := map[string]string{annotationRunFor: j.RunFor.String()}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.Name, Namespace: namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			ManagedBy:    ptr.To(managedBy),
			Completions:  ptr.To(j.Completions),
			Parallelism:  ptr.To(j.Parallelism),
			BackoffLimit: ptr.To[int32](6),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					NodeName:                      node,
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers:                    []corev1.Container{{Name: "main", Image: "registry.invalid/fake:1"}},
				},
			},
		},
	}
	if j.Indexed {
		job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	}
	failing := (j.Completions + int32(max(j.FailEvery, 1)) - 1) / int32(max(j.FailEvery, 1))
	onCode := func(action batchv1.PodFailurePolicyAction) *batchv1.PodFailurePolicy {
		return &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      action,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{chaosFailCode}},
		}}}
	}
	code := chaosFailCode
	switch j.Shape {
	case shapeRetry:
		// Each failing index fails once (kwok reads the index's failure count), is
		// retried, and succeeds.
		job.Spec.BackoffLimit = nil
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		annotations[annotationAttempts] = "1"
		code = chaosPlainFailCode
	case shapeFailIndex:
		job.Spec.BackoffLimit = nil
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		job.Spec.MaxFailedIndexes = ptr.To(failing)
		job.Spec.PodFailurePolicy = onCode(batchv1.PodFailurePolicyActionFailIndex)
	case shapeFailJob:
		job.Spec.PodFailurePolicy = onCode(batchv1.PodFailurePolicyActionFailJob)
	case shapeBackoff:
		// The backoff delays (10 s, 20 s, ...) bound the run's length: one retry.
		job.Spec.BackoffLimit = ptr.To[int32](1)
		code = chaosPlainFailCode
	}
	if j.FailEvery > 0 {
		annotations[annotationExitCode] = strconv.Itoa(code)
		annotations[annotationFailEvery] = strconv.Itoa(j.FailEvery)
	}
	return job
}

// exactCounts are the counters the Job must end with whatever the kills did, for the
// shapes where they are fixed (ok true): every index or pod succeeds once, and the
// failing indexes fail exactly once each. Suspension deletes pods only after their
// finalizer is gone, so it counts none as failed. The shapes that fail the whole Job
// delete running pods at a moment that the timing decides, and the deleted Job has
// no status.
func (j chaosJob) exactCounts() (c counts, ok bool) {
	failing := map[int]bool{}
	if j.FailEvery > 0 {
		for i := 0; i < int(j.Completions); i += j.FailEvery {
			failing[i] = true
		}
	}
	done := map[int]bool{}
	for i := range int(j.Completions) {
		if j.Shape != shapeFailIndex || !failing[i] {
			done[i] = true
		}
	}
	switch j.Shape {
	case shapeComplete, shapeSuspend:
		c = counts{Succeeded: j.Completions}
	case shapeRetry:
		c = counts{Succeeded: j.Completions, Failed: int32(len(failing))}
	case shapeFailIndex:
		c = counts{Succeeded: j.Completions - int32(len(failing)), Failed: int32(len(failing))}
	default:
		return counts{}, false
	}
	if j.Indexed {
		c.CompletedIndexes = formatIndexes(done)
	}
	return c, true
}
