package backoff

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/indexes"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

// IndexRemaining returns how long the replacement pod of one index of an owner of
// kind with backoffLimitPerIndex waits at now under policy p. failedPod is the last
// failed pod of the index (the one whose replacement is due); nil means the index has
// no failed pod and yields 0.
//
// The pod's annotations kind.FailureCountKey() and kind.IgnoredFailureCountKey()
// (batch.kubernetes.io/job-index-failure-count and job-index-ignored-failure-count for
// a batch/v1 Job) count the earlier failures of the index, so the
// failure number is failed + ignored + 1 (the pod itself), and the last failure
// finished at FinishTime(failedPod): [plainbackoff.Policy.IndexRemaining] of those
// counts.
//
// An annotation that is not a non-negative 32-bit integer counts 0, as upstream; the
// delay is still computed and returned together with an error that wraps the
// *indexes.AnnotationError, so callers can log it and go on. The pod is not modified.
func IndexRemaining(kind owner.Kind, failedPod *corev1.Pod, p plainbackoff.Policy, now time.Time) (time.Duration, error) {
	if failedPod == nil {
		return 0, nil
	}
	fc, err := indexes.PodFailureCount(kind, failedPod)
	d := p.IndexRemaining(fc.Failed, fc.Ignored, FinishTime(failedPod), now)
	if err != nil {
		return d, fmt.Errorf("backoff of the index of pod %s/%s: %w", failedPod.Namespace, failedPod.Name, err)
	}
	return d, nil
}
