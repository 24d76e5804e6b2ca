package ownedpods

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobkit/jobkit/internal/podutil"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// inPlace runs one step of an in-place restart while the group runs under
// that strategy: the attempts the roles' pods report move the barrier
// (plaingroup.InPlaceAttempts.Next), or fail the group (ReachedMaxRestarts).
// It returns the attempts to write: the status's, unchanged otherwise. The
// pods read are the roles' pods of their current attempt: a stray reports
// nothing, and so does a pod of an Indexed role whose completion index is at
// or above the role's parallelism (the role resized down: its pod goes, and
// holds no barrier). A succeeded pod reports nothing and is not expected.
func (s *sync) inPlace() plaingroup.InPlaceAttempts {
	a := s.in.Workload.Status.InPlace
	p := s.spec.FailurePolicy
	if p == nil || p.RestartStrategy != plaingroup.InPlaceRestart || s.finished() || s.in.Workload.Deleting {
		return a
	}
	var pods []plaingroup.PodAttempt
	key := s.in.Owner.IndexKey()
	for i := range s.pods {
		role := &s.spec.Roles[i]
		for _, pod := range s.pods[i] {
			v, ok := pod.Annotations[plaingroup.AnnotationInPlaceRestartAttempt]
			index, err := strconv.ParseInt(pod.Annotations[key], 10, 32)
			pods = append(pods, plaingroup.PodAttempt{Annotation: v, Annotated: ok,
				Failed: pod.Status.Phase == corev1.PodFailed, Succeeded: pod.Status.Phase == corev1.PodSucceeded,
				Leaving:      !role.NonIndexed && err == nil && index >= int64(role.Parallelism),
				RestartCount: podutil.MaxRestartCount(pod)})
		}
	}
	next, d, err := a.Next(s.spec.Roles, pods, p.MaxRestarts, s.Counters)
	if err != nil {
		s.warn("in-place restart: %v", err)
	}
	s.Apply(d)
	return next
}
