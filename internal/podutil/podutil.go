// Package podutil holds the small facts about pods that several jobkit packages
// read the same way. It is internal: its names may change freely.
package podutil

import corev1 "k8s.io/api/core/v1"

// RestartsAlways reports whether c is a restartable init container (a sidecar):
// restartPolicy Always on an init container.
func RestartsAlways(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// IsSidecarStatus reports whether the init container status at position i of
// pod.Status.InitContainerStatuses, named name, belongs to a restartable init
// container of the spec. The kubelet lists statuses in spec order, so position i is
// tried before a search; either way nothing is allocated. A negative i searches.
func IsSidecarStatus(pod *corev1.Pod, i int, name string) bool {
	inits := pod.Spec.InitContainers
	if i >= 0 && i < len(inits) && inits[i].Name == name {
		return RestartsAlways(&inits[i])
	}
	for j := range inits {
		if inits[j].Name == name {
			return RestartsAlways(&inits[j])
		}
	}
	return false
}

// IsTerminal reports whether pod has reached a terminal phase (Succeeded or Failed):
// its containers will not run again. A nil pod is not terminal.
func IsTerminal(pod *corev1.Pod) bool {
	return pod != nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

// IsReady reports whether pod has the Ready condition with status True, as the
// Job controller counts status.ready (of the pods that are also active). A nil
// pod is not ready.
func IsReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// MaxRestartCount is the largest restartCount among a pod's init containers
// and containers: how often its most restarted container restarted.
func MaxRestartCount(pod *corev1.Pod) int32 {
	var n int32
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for i := range list {
			n = max(n, list[i].RestartCount)
		}
	}
	return n
}
