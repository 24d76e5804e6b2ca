package podutil

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestIsSidecarStatus(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	pod := &corev1.Pod{Spec: corev1.PodSpec{InitContainers: []corev1.Container{
		{Name: "setup"},
		{Name: "proxy", RestartPolicy: always},
	}}}
	cases := []struct {
		name   string
		i      int
		status string
		want   bool
	}{
		{name: "sidecar at its position", i: 1, status: "proxy", want: true},
		{name: "sidecar listed out of order", i: 0, status: "proxy", want: true},
		{name: "sidecar searched", i: -1, status: "proxy", want: true},
		{name: "plain init container", i: 0, status: "setup", want: false},
		{name: "unknown name", i: 5, status: "nope", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsSidecarStatus(pod, tc.i, tc.status); got != tc.want {
				t.Errorf("IsSidecarStatus(pod, %d, %q) = %v, want %v", tc.i, tc.status, got, tc.want)
			}
		})
	}
}

func TestIsTerminal(t *testing.T) {
	cases := []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{name: "nil", pod: nil, want: false},
		{name: "pending", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, want: false},
		{name: "running", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}}, want: false},
		{name: "succeeded", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, want: true},
		{name: "failed", pod: &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsTerminal(tc.pod); got != tc.want {
				t.Errorf("IsTerminal() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMaxRestartCount(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.PodStatus
		want int32
	}{
		{name: "no status", want: 0},
		{name: "containers", pod: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{RestartCount: 2}, {RestartCount: 5}}}, want: 5},
		{name: "an init container restarted more", pod: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{RestartCount: 7}},
			ContainerStatuses:     []corev1.ContainerStatus{{RestartCount: 1}}}, want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaxRestartCount(&corev1.Pod{Status: tt.pod}); got != tt.want {
				t.Errorf("MaxRestartCount() = %d, want %d", got, tt.want)
			}
		})
	}
}
