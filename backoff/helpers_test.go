package backoff_test

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// t0 is the fixed reference time of the tests.
var t0 = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// podBuilder builds test pods step by step; every method returns the builder.
type podBuilder struct{ pod *corev1.Pod }

func newPod(name string) *podBuilder {
	return &podBuilder{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}}
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder {
	b.pod.Status.Phase = p
	return b
}

func (b *podBuilder) created(t time.Time) *podBuilder {
	b.pod.CreationTimestamp = metav1.NewTime(t)
	return b
}

func (b *podBuilder) deleted(t time.Time, grace *int64) *podBuilder {
	b.pod.DeletionTimestamp = ptr.To(metav1.NewTime(t))
	b.pod.DeletionGracePeriodSeconds = grace
	return b
}

func (b *podBuilder) ready(status corev1.ConditionStatus, t time.Time) *podBuilder {
	b.pod.Status.Conditions = append(b.pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.NewTime(t),
	})
	return b
}

// terminated adds a regular container that finished at t (a zero t leaves
// finishedAt unset).
func (b *podBuilder) terminated(t time.Time) *podBuilder {
	b.pod.Status.ContainerStatuses = append(b.pod.Status.ContainerStatuses, terminatedStatus("c", t))
	return b
}

// running adds a regular container that is still running.
func (b *podBuilder) running() *podBuilder {
	b.pod.Status.ContainerStatuses = append(b.pod.Status.ContainerStatuses, corev1.ContainerStatus{
		Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	})
	return b
}

// initSpec declares an init container in the spec; sidecar makes it restartable.
func (b *podBuilder) initSpec(name string, sidecar bool) *podBuilder {
	c := corev1.Container{Name: name}
	if sidecar {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	}
	b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, c)
	return b
}

// initTerminated adds the status of an init container that finished at t.
func (b *podBuilder) initTerminated(name string, t time.Time) *podBuilder {
	b.pod.Status.InitContainerStatuses = append(b.pod.Status.InitContainerStatuses, terminatedStatus(name, t))
	return b
}

// initRunning adds the status of an init container that is still running.
func (b *podBuilder) initRunning(name string) *podBuilder {
	b.pod.Status.InitContainerStatuses = append(b.pod.Status.InitContainerStatuses, corev1.ContainerStatus{
		Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	})
	return b
}

func (b *podBuilder) annotation(k, v string) *podBuilder {
	if b.pod.Annotations == nil {
		b.pod.Annotations = map[string]string{}
	}
	b.pod.Annotations[k] = v
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.pod }

func terminatedStatus(name string, t time.Time) corev1.ContainerStatus {
	term := &corev1.ContainerStateTerminated{}
	if !t.IsZero() {
		term.FinishedAt = metav1.NewTime(t)
	}
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: term}}
}

// finished returns a pod in phase p whose only container finished at t.
func finished(name string, p corev1.PodPhase, t time.Time) *corev1.Pod {
	return newPod(name).phase(p).terminated(t).obj()
}
