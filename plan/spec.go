package plan

import (
	"fmt"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	plainactive "github.com/jobkit/jobkit/plain/active"
)

// spec is the owner's Spec with the API's defaults applied.
type spec struct {
	indexed          bool
	completions      *int32 // nil: a work queue, done when any pod succeeds
	parallelism      int32
	backoffLimit     int32
	perIndex         *int32
	maxFailedIndexes *int32
	onlyFailed       bool // podReplacementPolicy Failed
	suspended        bool
	deadline         *int64
	failurePolicy    *batchv1.PodFailurePolicy
	successPolicy    *batchv1.SuccessPolicy
	onFailure        bool
}

// sizes returns spec.completions and spec.parallelism with the API's defaults:
// parallelism 1 when nil, and then completions 1 when nil too (a nil completions
// with a parallelism set is a work queue).
func (s *Spec) sizes() (completions *int32, parallelism int32) {
	if s.Parallelism != nil {
		return s.Completions, *s.Parallelism
	}
	if s.Completions == nil {
		return ptr.To[int32](1), 1
	}
	return s.Completions, 1
}

// WantActive is the number of active pods an owner of this spec wants with
// succeeded completions done and active pods running: plain/active.Want of the
// spec with the API's defaults (see Spec). A suspended owner wants none.
func (s *Spec) WantActive(succeeded, active int32) int32 {
	completions, parallelism := s.sizes()
	return wantActive(completions, parallelism, ptr.Deref(s.Suspend, false), succeeded, active)
}

// wantActive is plain/active.Want of the sizes of a spec: the one conversion
// onto it.
func wantActive(completions *int32, parallelism int32, suspended bool, succeeded, active int32) int32 {
	c := plainactive.NoCompletions
	if completions != nil {
		c = int(*completions)
	}
	return int32(plainactive.Want(plainactive.Job{
		Completions: c,
		Parallelism: int(parallelism),
		Succeeded:   int(succeeded),
		Active:      int(active),
		Suspended:   suspended,
	}))
}

func readSpec(s *Spec) (spec, error) {
	var out spec
	if s.Template == nil {
		return out, fmt.Errorf("%w: spec.template: required", ErrInvalidJob)
	}
	switch mode := ptr.Deref(s.CompletionMode, batchv1.NonIndexedCompletion); mode {
	case batchv1.NonIndexedCompletion:
	case batchv1.IndexedCompletion:
		out.indexed = true
	default:
		return out, fmt.Errorf("%w: spec.completionMode: unknown value %q", ErrInvalidJob, mode)
	}
	out.completions, out.parallelism = s.sizes()
	if out.parallelism < 0 {
		return out, fmt.Errorf("%w: spec.parallelism: must not be negative, got %d", ErrInvalidJob, out.parallelism)
	}
	if out.completions != nil && *out.completions < 0 {
		return out, fmt.Errorf("%w: spec.completions: must not be negative, got %d", ErrInvalidJob, *out.completions)
	}
	if out.indexed && out.completions == nil {
		return out, fmt.Errorf("%w: spec.completions: required when completionMode is Indexed", ErrInvalidJob)
	}
	out.perIndex = s.BackoffLimitPerIndex
	if !out.indexed {
		out.perIndex = nil
	}
	out.maxFailedIndexes = s.MaxFailedIndexes
	switch {
	case s.BackoffLimit != nil:
		out.backoffLimit = *s.BackoffLimit
	case out.perIndex != nil:
		out.backoffLimit = math.MaxInt32
	default:
		out.backoffLimit = 6
	}
	if out.backoffLimit < 0 {
		return out, fmt.Errorf("%w: spec.backoffLimit: must not be negative, got %d", ErrInvalidJob, out.backoffLimit)
	}
	out.onlyFailed = s.EffectivePodReplacementPolicy() == batchv1.Failed
	out.suspended = ptr.Deref(s.Suspend, false)
	out.deadline = s.ActiveDeadlineSeconds
	out.failurePolicy = s.PodFailurePolicy
	out.successPolicy = s.SuccessPolicy
	out.onFailure = s.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure
	return out, nil
}

// EffectivePodReplacementPolicy returns spec.podReplacementPolicy with the API's
// default filled in: Failed when a podFailurePolicy is set, TerminatingOrFailed
// otherwise.
func (s *Spec) EffectivePodReplacementPolicy() batchv1.PodReplacementPolicy {
	def := batchv1.TerminatingOrFailed
	if s.PodFailurePolicy != nil {
		def = batchv1.Failed
	}
	return ptr.Deref(s.PodReplacementPolicy, def)
}
