package ownedpods

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/internal/podutil"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// inPlace runs one step of an in-place restart while the group runs under
// that strategy: the attempts the roles' pods report move the barrier
// (plaingroup.InPlaceAttempts.Next), or fail the group (ReachedMaxRestarts).
// It returns the attempts to write: the status's, unchanged otherwise. The
// pods read are the roles' pods of their current attempt: a stray reports
// nothing.
func (s *sync) inPlace() plaingroup.InPlaceAttempts {
	a := s.in.Workload.Status.InPlace
	p := s.spec.FailurePolicy
	if p == nil || p.RestartStrategy != plaingroup.InPlaceRestart || s.finished() || s.in.Workload.Deleting {
		return a
	}
	var pods []plaingroup.PodAttempt
	for i := range s.pods {
		for _, pod := range s.pods[i] {
			v, ok := pod.Annotations[plaingroup.AnnotationInPlaceRestartAttempt]
			pods = append(pods, plaingroup.PodAttempt{Annotation: v, Annotated: ok,
				Failed: pod.Status.Phase == corev1.PodFailed, RestartCount: podutil.MaxRestartCount(pod)})
		}
	}
	next, d, err := a.Next(s.spec.Roles, pods, p.MaxRestarts, s.Counters)
	if err != nil {
		s.warn("in-place restart: %v", err)
	}
	s.Apply(d)
	return next
}
