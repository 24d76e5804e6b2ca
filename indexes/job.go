package indexes

import (
	"errors"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
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

// JobOutcomes returns the finished indexes of an Indexed Job: the succeeded ones
// (status.completedIndexes and the pods in phase Succeeded that still carry the
// tracking finalizer batch.kubernetes.io/job-tracking, that is, that the status does
// not count yet) and, with spec.backoffLimitPerIndex, the failed ones
// (status.failedIndexes and the tracked pods for which indexFailed returns true).
//
// An index is finished by its first outcome, as plan decides it
// ([plainindexes.Outcomes.Record]): a pod that succeeds for an index in
// status.failedIndexes changes nothing, and a pod that fails an index that succeeded
// (in the status or by a pod seen now) changes nothing either, so no index is both.
//
// indexFailed decides, for one tracked pod with a valid index below spec.completions
// whose index has not succeeded, whether that pod fails its index. It must check both
// that the pod failed (phase Failed, or, unless podReplacementPolicy is Failed, being
// deleted without having succeeded) and that the failure is final for the index
// ([plainindexes.IndexFailed]: the pod failure policy matched a FailIndex rule, or the
// failure counts and the pod's [plainindexes.FailureCount].Failed has already reached
// backoffLimitPerIndex). The predicate keeps this package free of the pod failure
// policy. A nil indexFailed adds no failed index from the pods.
//
// Indexes at or above spec.completions are left out: after an elastic scale-down, the
// status legitimately holds such indexes, so they are not an error. Pods without a
// valid index are ignored ([Strays] deals with them). A status field that does not
// parse yields an error wrapping the *ParseError and naming the field, with the valid
// part kept in the result; an invalid spec.completions yields the error of
// [Completions] and no indexes. The result is canonical. JobOutcomes runs in
// O(len(s) + p log p) for status strings of length s and p pods, plus the calls to
// indexFailed, and modifies neither the job nor the pods.
func JobOutcomes(job *batchv1.Job, pods []*corev1.Pod, indexFailed func(*corev1.Pod) bool) (plainindexes.Outcomes, error) {
	completions, err := Completions(job)
	if err != nil {
		return plainindexes.Outcomes{}, err
	}
	perIndex := job.Spec.BackoffLimitPerIndex != nil
	var prev plainindexes.Outcomes
	prev.Succeeded, err = parseStatus(job, "status.completedIndexes", job.Status.CompletedIndexes, completions)
	var errFailed error
	if perIndex && job.Status.FailedIndexes != nil {
		prev.Failed, errFailed = parseStatus(job, "status.failedIndexes", *job.Status.FailedIndexes, completions)
	}
	out := prev.WithSucceeded(completions, podIndexes(pods, completions, func(p *corev1.Pod, _ int) bool {
		return p.Status.Phase == corev1.PodSucceeded
	}))
	if perIndex && indexFailed != nil {
		// Pods of a succeeded index are not asked about: WithFailed would leave them
		// out anyway.
		out = out.WithFailed(completions, podIndexes(pods, completions, func(p *corev1.Pod, ix int) bool {
			return !out.Succeeded.Has(ix) && indexFailed(p)
		}))
	}
	return out, errors.Join(err, errFailed)
}

// SucceededIndexes returns the succeeded indexes of an Indexed Job: the Succeeded set of
// [JobOutcomes] (which the pods cannot fail, so no predicate is needed). An index in
// status.failedIndexes (with backoffLimitPerIndex) is never listed, whatever pod of it
// succeeded since.
func SucceededIndexes(job *batchv1.Job, pods []*corev1.Pod) (plainindexes.Intervals, error) {
	out, err := JobOutcomes(job, pods, nil)
	return out.Succeeded, err
}

// FailedIndexes returns the failed indexes of an Indexed Job with backoffLimitPerIndex:
// the Failed set of [JobOutcomes], which never lists a succeeded index. For a Job
// without spec.backoffLimitPerIndex it returns nil: such a Job has no failed indexes,
// and its status.failedIndexes stays unset. (With backoffLimitPerIndex, upstream
// writes status.failedIndexes even when empty; that is the caller's business.)
func FailedIndexes(job *batchv1.Job, pods []*corev1.Pod, indexFailed func(*corev1.Pod) bool) (plainindexes.Intervals, error) {
	if job.Spec.BackoffLimitPerIndex == nil {
		return nil, nil
	}
	out, err := JobOutcomes(job, pods, indexFailed)
	return out.Failed, err
}

// parseStatus reads an index list of the Job status, keeping the indexes below
// completions.
func parseStatus(job *batchv1.Job, field, s string, completions int) (plainindexes.Intervals, error) {
	ivs, err := plainindexes.Parse(s, plainindexes.NoLimit)
	ivs = ivs.Trim(completions)
	if err != nil {
		return ivs, fmt.Errorf("job %s: %s: %w", jobKey(job), field, err)
	}
	return ivs, nil
}

// podIndexes returns the in-range indexes of the pods with the tracking finalizer that
// match.
func podIndexes(pods []*corev1.Pod, completions int, match func(p *corev1.Pod, index int) bool) []int {
	var xs []int
	for _, p := range pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		ix := podIndex(p)
		if ix == plainindexes.Unknown || ix >= completions || !match(p, ix) {
			continue
		}
		xs = append(xs, ix)
	}
	return xs
}
