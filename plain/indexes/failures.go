package indexes

import "math"

// FailureCount is what a pod of an Indexed Job with backoffLimitPerIndex records about
// the earlier pods of its index (in Kubernetes, in two annotations of the pod).
type FailureCount struct {
	// Failed counts the earlier failed pods of the index that counted towards
	// backoffLimitPerIndex (annotation batch.kubernetes.io/job-index-failure-count).
	Failed int32
	// Ignored counts the earlier failed pods matched by an Ignore rule of the pod
	// failure policy (annotation batch.kubernetes.io/job-index-ignored-failure-count).
	Ignored int32
}

// Total returns Failed + Ignored: every earlier failure of the index, which is what the
// per-index backoff delay counts. It is computed in int (no int32 overflow), and a
// negative count counts 0.
func (fc FailureCount) Total() int {
	return max(int(fc.Failed), 0) + max(int(fc.Ignored), 0)
}

// Exhausts reports whether one more counted failure of the pod that carries fc fails its
// index: the pod's Failed count has reached backoffLimitPerIndex. (The pod's own failure
// is not yet in its annotation, so Failed+1 failures exceed the limit.)
func (fc FailureCount) Exhausts(backoffLimitPerIndex int32) bool {
	return fc.Failed >= backoffLimitPerIndex
}

// NextFailureCount returns the failure counts of the pod that replaces a failed pod whose
// counts were prev: one more Failed when its failure counted towards
// backoffLimitPerIndex, one more Ignored when an Ignore rule of the pod failure policy
// matched it. Counts stop at math.MaxInt32.
func NextFailureCount(prev FailureCount, ignored bool) FailureCount {
	if ignored {
		prev.Ignored = inc(prev.Ignored)
	} else {
		prev.Failed = inc(prev.Failed)
	}
	return prev
}

func inc(x int32) int32 {
	if x == math.MaxInt32 {
		return x
	}
	return x + 1
}

// IndexFailure holds what decides whether a failed pod of a Job with
// backoffLimitPerIndex fails its index. The zero value is a failure that counts, of a
// pod whose index has no earlier failure, under backoffLimitPerIndex 0: it fails the
// index.
type IndexFailure struct {
	// FailIndex: a pod failure policy rule with action FailIndex matched the pod.
	FailIndex bool
	// Ignored: a pod failure policy rule with action Ignore matched the pod, so the
	// failure does not count towards backoffLimitPerIndex.
	Ignored bool
	// Count is the pod's record of the earlier failures of its index.
	Count FailureCount
	// BackoffLimitPerIndex is spec.backoffLimitPerIndex.
	BackoffLimitPerIndex int32
}

// IndexFailed is the Job controller's rule for one failed pod of a Job with
// backoffLimitPerIndex: the pod fails its index when a FailIndex rule matched it, or
// when its failure counts and its index's counted failures have reached the limit
// ([FailureCount.Exhausts]). Whether the pod failed at all (phase Failed, or being
// deleted when podReplacementPolicy is not Failed) is the caller's to check first.
func IndexFailed(f IndexFailure) bool {
	return f.FailIndex || (!f.Ignored && f.Count.Exhausts(f.BackoffLimitPerIndex))
}
