package indexes

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobPod is a pod of a batch/v1 Job with the index annotation ix (none when empty),
// tracked by the Job's finalizer when tracked is true.
func jobPod(name, ix string, phase corev1.PodPhase, tracked bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if ix != "" {
		p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ix}
	}
	if tracked {
		p.Finalizers = []string{"other", batchv1.JobTrackingFinalizer}
	}
	return p
}

func deepCopyPods(pods []*corev1.Pod) []*corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}
