package childjobs

import (
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
// whose jobset-uid label names another group.
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
		out = append(out, plaingroup.PodAttempt{Annotation: v, Annotated: ok, Failed: pod.Status.Phase == corev1.PodFailed, RestartCount: podutil.MaxRestartCount(pod)})
	}
	return out
}
