package reconcile_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/reconcile"
)

// A pod informer's transform keeps of each pod what the Reconciler reads; with
// client-go: podInformer.SetTransform(func(obj any) (any, error) { if p, ok :=
// obj.(*corev1.Pod); ok { return reconcile.TrimPod(p), nil }; return obj, nil }).
func ExampleTrimPod() {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-0", Finalizers: []string{"batch.kubernetes.io/job-tracking"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "main", Image: "trainer:v1",
			Env: []corev1.EnvVar{{Name: "EPOCHS", Value: "10"}}}}, Volumes: []corev1.Volume{{Name: "data"}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, PodIP: "10.0.0.7", ContainerStatuses: []corev1.ContainerStatus{{
			Name: "main", Image: "trainer:v1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}}}},
	}
	p := reconcile.TrimPod(pod)
	fmt.Println(p.Name, p.Finalizers, len(p.ManagedFields), p.Spec.NodeName, p.Status.Phase)
	fmt.Printf("container %q image %q env %d volumes %d\n", p.Spec.Containers[0].Name, p.Spec.Containers[0].Image, len(p.Spec.Containers[0].Env), len(p.Spec.Volumes))
	fmt.Printf("status of %q: exit code %d, image %q, pod IP %q\n", p.Status.ContainerStatuses[0].Name,
		p.Status.ContainerStatuses[0].State.Terminated.ExitCode, p.Status.ContainerStatuses[0].Image, p.Status.PodIP)
	// Output:
	// train-0 [batch.kubernetes.io/job-tracking] 0 node-1 Failed
	// container "main" image "" env 0 volumes 0
	// status of "main": exit code 42, image "", pod IP ""
}
