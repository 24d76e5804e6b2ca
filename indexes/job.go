package indexes

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Completions returns spec.completions of an Indexed Job as an int, the bound of its
// indexes. A Job that did not go through API defaulting gets the API's default: when
// both completions and parallelism are nil, completions is 1. A nil completions with a
// parallelism set, which the API rejects for Indexed Jobs, and a negative completions
// yield 0 and an error naming the field.
func Completions(job *batchv1.Job) (int, error) {
	switch c := job.Spec.Completions; {
	case c == nil && job.Spec.Parallelism == nil:
		return 1, nil
	case c == nil:
		return 0, fmt.Errorf("job %s: spec.completions: required for an Indexed Job", jobKey(job))
	case *c < 0:
		return 0, fmt.Errorf("job %s: spec.completions: %d: must not be negative", jobKey(job), *c)
	default:
		return int(*c), nil
	}
}

func jobKey(job *batchv1.Job) string { return job.Namespace + "/" + job.Name }

// hasTrackingFinalizer reports whether the pod still has to be counted by the Job.
func hasTrackingFinalizer(pod *corev1.Pod) bool {
	return slices.Contains(pod.Finalizers, batchv1.JobTrackingFinalizer)
}

// SucceededIndexes returns the succeeded indexes of an Indexed Job: those recorded in
// status.completedIndexes and those of the pods in phase Succeeded that still carry the
// tracking finalizer (batch.kubernetes.io/job-tracking), that is, that the status does
// not count yet. Indexes at or above spec.completions are left out: after an elastic
// scale-down, status.completedIndexes legitimately holds such indexes, so they are not
// an error. Pods without a valid index are ignored ([Strays] deals with them).
//
// A status.completedIndexes that does not parse yields an error wrapping the
// *ParseError and naming the field, with the valid part kept in the result; an invalid
// spec.completions yields the error of [Completions] and no indexes. The result is
// canonical. SucceededIndexes runs in O(len(s) + p log p) for a status string of length
// s and p pods, and modifies neither the job nor the pods.
func SucceededIndexes(job *batchv1.Job, pods []*corev1.Pod) (Intervals, error) {
	completions, err := Completions(job)
	if err != nil {
		return nil, err
	}
	prev, err := parseStatus(job, "status.completedIndexes", job.Status.CompletedIndexes, completions)
	fresh := podIndexes(pods, completions, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded
	})
	return prev.WithSorted(fresh), err
}

// FailedIndexes returns the failed indexes of an Indexed Job with backoffLimitPerIndex:
// those recorded in status.failedIndexes and those of the pods that still carry the
// tracking finalizer and for which indexFailed returns true. For a Job without
// spec.backoffLimitPerIndex it returns nil: such a Job has no failed indexes, and its
// status.failedIndexes stays unset. (With backoffLimitPerIndex, upstream writes
// status.failedIndexes even when empty; that is the caller's business.)
//
// indexFailed decides, for one pod with a valid index below spec.completions, whether
// that pod fails its index. It must check both that the pod failed (phase Failed, or,
// unless podReplacementPolicy is Failed, being deleted without having succeeded) and that
// the failure is final for the index: the pod failure policy matched a FailIndex rule, or
// the failure counts towards the limit and the pod's [FailureCount].Failed has already
// reached backoffLimitPerIndex (see [FailureCount.Exhausts]). The predicate keeps this
// package free of the pod failure policy. A nil indexFailed adds no pod.
//
// Out-of-range indexes, parse errors and an invalid spec.completions are treated as in
// [SucceededIndexes], with the error naming status.failedIndexes. The cost is
// O(len(s) + p log p) plus the calls to indexFailed; neither the job nor the pods are
// modified.
func FailedIndexes(job *batchv1.Job, pods []*corev1.Pod, indexFailed func(*corev1.Pod) bool) (Intervals, error) {
	if job.Spec.BackoffLimitPerIndex == nil {
		return nil, nil
	}
	completions, err := Completions(job)
	if err != nil {
		return nil, err
	}
	var prev Intervals
	if job.Status.FailedIndexes != nil {
		prev, err = parseStatus(job, "status.failedIndexes", *job.Status.FailedIndexes, completions)
	}
	if indexFailed == nil {
		return prev, err
	}
	return prev.WithSorted(podIndexes(pods, completions, indexFailed)), err
}

// parseStatus reads an index list of the Job status, keeping the indexes below
// completions.
func parseStatus(job *batchv1.Job, field, s string, completions int) (Intervals, error) {
	ivs, err := Parse(s, NoLimit)
	ivs = ivs.Trim(completions)
	if err != nil {
		return ivs, fmt.Errorf("job %s: %s: %w", jobKey(job), field, err)
	}
	return ivs, nil
}

// podIndexes returns, sorted, the in-range indexes of the pods with the tracking
// finalizer that match.
func podIndexes(pods []*corev1.Pod, completions int, match func(*corev1.Pod) bool) []int {
	var xs []int
	for _, p := range pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		ix := podIndex(p)
		if ix == Unknown || ix >= completions || !match(p) {
			continue
		}
		xs = append(xs, ix)
	}
	slices.Sort(xs)
	return xs
}
