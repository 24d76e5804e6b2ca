package childjobs

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/internal/podutil"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// inPlace runs one step of an in-place restart while the group runs under
// that strategy: the attempts its pods report move the barrier
// (plaingroup.InPlaceAttempts.Next), or fail the group (ReachedMaxRestarts).
// It returns the attempts to write: the status's, unchanged otherwise.
func (s *sync) inPlace() plaingroup.InPlaceAttempts {
	st := &s.in.Status
	a := plaingroup.InPlaceAttempts{Previous: st.PreviousInPlaceRestartAttempt, Current: st.CurrentInPlaceRestartAttempt}
	p := s.spec.FailurePolicy
	if p == nil || p.RestartStrategy != plaingroup.InPlaceRestart || s.Finished() != nil {
		return a
	}
	next, d, err := a.Next(s.spec.Roles, s.podAttempts(), p.MaxRestarts, s.Counters)
	if err != nil {
		s.warn("in-place restart: %v", err)
	}
	s.Apply(d)
	return next
}

// podAttempts reads the group's pods: those labelled with its name, less those
// whose jobset-uid label names another group. A pod is leaving (it holds no
// barrier) when its labels put it in a child at or beyond its role's replicas,
// when its completion index is at or beyond its role's parallelism (an
// Indexed role resized down), or when it has succeeded in a child of an
// earlier group restart (the new child runs its index again).
func (s *sync) podAttempts() []plaingroup.PodAttempt {
	out := make([]plaingroup.PodAttempt, 0, len(s.in.Pods))
	for _, pod := range s.in.Pods {
		if pod == nil || pod.Labels[plaingroup.LabelJobSetName] != s.in.Name {
			continue
		}
		if uid, ok := pod.Labels[plaingroup.LabelJobSetUID]; ok && uid != string(s.in.UID) {
			continue
		}
		v, ok := pod.Annotations[plaingroup.AnnotationInPlaceRestartAttempt]
		succeeded := pod.Status.Phase == corev1.PodSucceeded
		out = append(out, plaingroup.PodAttempt{Annotation: v, Annotated: ok, Failed: pod.Status.Phase == corev1.PodFailed,
			Succeeded: succeeded, Leaving: s.leaving(pod, succeeded), RestartCount: podutil.MaxRestartCount(pod)})
	}
	return out
}

// leaving reports whether pod is on its way out of the group's size (see
// podAttempts), by its labels and completion index: a label it lacks or
// cannot parse says nothing.
func (s *sync) leaving(pod *corev1.Pod, succeeded bool) bool {
	var role *plaingroup.Role
	for i := range s.spec.Roles {
		if s.spec.Roles[i].Name == pod.Labels[plaingroup.LabelRoleName] {
			role = &s.spec.Roles[i]
		}
	}
	if role == nil {
		return false
	}
	if n, ok := intValue(pod.Labels, plaingroup.LabelJobIndex); ok && n >= role.Replicas {
		return true
	}
	if n, ok := intValue(pod.Annotations, batchv1.JobCompletionIndexAnnotation); ok && !role.NonIndexed && n >= role.Parallelism {
		return true
	}
	n, ok := intValue(pod.Labels, plaingroup.LabelRestartAttempt)
	return succeeded && ok && n < s.Counters.Restarts
}

// intValue parses m[key] as a non-negative integer of 32 bits.
func intValue(m map[string]string, key string) (int32, bool) {
	v, ok := m[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	return int32(n), err == nil && n >= 0
}
