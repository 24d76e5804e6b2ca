package podoutcome_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

var (
	t0       = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	finished = metav1.NewTime(t0.Add(10 * time.Minute))
)

type podOpt func(*corev1.Pod)

// newPod returns a pod with one container "test" (and no statuses) in phase.
func newPod(phase corev1.PodPhase, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", UID: "pod-uid-1", CreationTimestamp: metav1.NewTime(t0)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}}},
		Status:     corev1.PodStatus{Phase: phase},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func reason(r, msg string) podOpt {
	return func(p *corev1.Pod) { p.Status.Reason, p.Status.Message = r, msg }
}

func deleting(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(t0.Add(time.Hour))) }

func terminated(name string, code int32, why string, at metav1.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: why, FinishedAt: at}}}
}

func running(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func statuses(cs ...corev1.ContainerStatus) podOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses = cs }
}

func initStatuses(cs ...corev1.ContainerStatus) podOpt {
	return func(p *corev1.Pod) { p.Status.InitContainerStatuses = cs }
}

// inits adds init containers; names starting with "side" are sidecars.
func inits(names ...string) podOpt {
	return func(p *corev1.Pod) {
		for _, n := range names {
			c := corev1.Container{Name: n}
			if len(n) >= 4 && n[:4] == "side" {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	}
}

func containers(names ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = nil
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
		}
	}
}

func result(o podoutcome.Outcome, container, msg string) podoutcome.Result {
	return podoutcome.Result{Outcome: o, Container: container, Message: msg, PodUID: "pod-uid-1"}
}

func terminating(r podoutcome.Result) podoutcome.Result { r.Terminating = true; return r }

func TestClassify(t *testing.T) {
	ok := terminated("test", 0, "Completed", finished)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want podoutcome.Result
	}{
		// Unexpected stops.
		{
			name: "evicted",
			pod:  newPod(corev1.PodFailed, reason("Evicted", "The node was low on resource: memory.")),
			want: result(podoutcome.OutcomeEvicted, "", "pod was evicted: The node was low on resource: memory."),
		},
		{
			name: "evicted is checked before the phase",
			pod:  newPod(corev1.PodSucceeded, reason("Evicted", ""), statuses(ok)),
			want: result(podoutcome.OutcomeEvicted, "", "pod was evicted"),
		},
		{
			name: "node lost while being deleted",
			pod:  newPod(corev1.PodRunning, reason("NodeLost", "Node n1 which was running pod job-1 is unresponsive"), deleting),
			want: terminating(result(podoutcome.OutcomeNodeLost, "", "pod's node was lost: Node n1 which was running pod job-1 is unresponsive")),
		},
		{
			name: "node lost without deletion falls through to the phase",
			pod:  newPod(corev1.PodRunning, reason("NodeLost", "")),
			want: result(podoutcome.OutcomeRunning, "", "pod is running"),
		},
		{
			name: "OOM-killed container while running",
			pod:  newPod(corev1.PodRunning, statuses(running("helper"), terminated("test", 137, "OOMKilled", finished))),
			want: result(podoutcome.OutcomeOOMKilled, "test", `container "test" was OOM-killed while the pod was running`),
		},
		{
			name: "OOM-killed sidecar while running",
			pod: newPod(corev1.PodRunning, inits("sidecar"), statuses(running("test")),
				initStatuses(terminated("sidecar", 137, "OOMKilled", finished))),
			want: result(podoutcome.OutcomeOOMKilled, "sidecar", `init container "sidecar" was OOM-killed while the pod was running`),
		},
		{
			name: "OOM-killed while running and being deleted",
			pod:  newPod(corev1.PodRunning, deleting, statuses(terminated("test", 137, "OOMKilled", finished))),
			want: terminating(result(podoutcome.OutcomeOOMKilled, "test", `container "test" was OOM-killed while the pod was running`)),
		},
		{
			name: "an earlier OOM kill in lastState does not count",
			pod: newPod(corev1.PodRunning, statuses(corev1.ContainerStatus{Name: "test",
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
			})),
			want: result(podoutcome.OutcomeRunning, "", "pod is running"),
		},
		{
			name: "OOM-killed in a failed pod is a failure",
			pod:  newPod(corev1.PodFailed, statuses(terminated("test", 137, "OOMKilled", finished))),
			want: result(podoutcome.OutcomeFailed, "test", `container "test" exited with code 137 (OOMKilled)`),
		},
		{
			name: "phase unknown",
			pod:  newPod(corev1.PodUnknown),
			want: result(podoutcome.OutcomeUnknown, "", "pod's state is unknown"),
		},
		{
			name: "phase unknown while being deleted",
			pod:  newPod(corev1.PodUnknown, deleting, reason("", "node stopped reporting")),
			want: terminating(result(podoutcome.OutcomeUnknown, "", "pod's state is unknown: node stopped reporting")),
		},

		// Success.
		{
			name: "succeeded",
			pod:  newPod(corev1.PodSucceeded, statuses(ok)),
			want: result(podoutcome.OutcomeSucceeded, "", "every container exited with code 0"),
		},
		{
			name: "succeeded with init containers; sidecars may end any way or not at all",
			pod: newPod(corev1.PodSucceeded, inits("setup", "sidecar", "sidecar2"), statuses(ok),
				initStatuses(terminated("setup", 0, "Completed", finished), terminated("sidecar", 137, "Error", metav1.Time{}))),
			want: result(podoutcome.OutcomeSucceeded, "", "every container exited with code 0"),
		},
		{
			name: "succeeded and being deleted is still a success",
			pod:  newPod(corev1.PodSucceeded, deleting, statuses(ok)),
			want: terminating(result(podoutcome.OutcomeSucceeded, "", "every container exited with code 0")),
		},
		{
			name: "succeeded without containers in spec or status",
			pod:  newPod(corev1.PodSucceeded, containers()),
			want: result(podoutcome.OutcomeSucceeded, "", "every container exited with code 0"),
		},
		{
			name: "false success: container still running",
			pod:  newPod(corev1.PodSucceeded, statuses(running("test"))),
			want: result(podoutcome.OutcomeFalseSuccess, "test", `pod is in phase Succeeded but container "test" has not terminated`),
		},
		{
			name: "false success: non-zero exit code",
			pod:  newPod(corev1.PodSucceeded, containers("a", "test"), statuses(terminated("a", 0, "", finished), terminated("test", 2, "Error", finished))),
			want: result(podoutcome.OutcomeFalseSuccess, "test", `pod is in phase Succeeded but container "test" exited with code 2`),
		},
		{
			name: "false success: no finish time",
			pod:  newPod(corev1.PodSucceeded, statuses(terminated("test", 0, "Completed", metav1.Time{}))),
			want: result(podoutcome.OutcomeFalseSuccess, "test", `pod is in phase Succeeded but container "test" terminated without a finish time`),
		},
		{
			name: "false success: container without a status",
			pod:  newPod(corev1.PodSucceeded, containers("test", "upload"), statuses(ok)),
			want: result(podoutcome.OutcomeFalseSuccess, "upload", `pod is in phase Succeeded but container "upload" has no status`),
		},
		{
			name: "false success: no statuses at all",
			pod:  newPod(corev1.PodSucceeded),
			want: result(podoutcome.OutcomeFalseSuccess, "test", `pod is in phase Succeeded but container "test" has no status`),
		},
		{
			name: "false success: init container failed",
			pod: newPod(corev1.PodSucceeded, inits("sidecar", "setup"), statuses(ok),
				initStatuses(terminated("sidecar", 1, "Error", finished), terminated("setup", 1, "Error", finished))),
			want: result(podoutcome.OutcomeFalseSuccess, "setup", `pod is in phase Succeeded but init container "setup" exited with code 1`),
		},
		{
			name: "false success: init container without a status",
			pod:  newPod(corev1.PodSucceeded, inits("sidecar", "setup"), statuses(ok)),
			want: result(podoutcome.OutcomeFalseSuccess, "setup", `pod is in phase Succeeded but init container "setup" has no status`),
		},
		{
			name: "false success: statuses out of spec order are matched by name",
			pod: newPod(corev1.PodSucceeded, containers("a", "b"), inits("setup", "sidecar"),
				statuses(terminated("b", 0, "", finished), terminated("a", 0, "", finished)),
				initStatuses(running("sidecar"), terminated("setup", 0, "", finished))),
			want: result(podoutcome.OutcomeSucceeded, "", "every container exited with code 0"),
		},

		// Failure.
		{
			name: "failed names the failed container",
			pod:  newPod(corev1.PodFailed, containers("a", "test"), statuses(terminated("a", 0, "Completed", finished), terminated("test", 1, "Error", finished))),
			want: result(podoutcome.OutcomeFailed, "test", `container "test" exited with code 1 (Error)`),
		},
		{
			name: "failed init container is named before the containers",
			pod: newPod(corev1.PodFailed, inits("sidecar", "setup"),
				initStatuses(terminated("sidecar", 143, "", finished), terminated("setup", 3, "", finished)),
				statuses(terminated("test", 1, "", finished))),
			want: result(podoutcome.OutcomeFailed, "setup", `init container "setup" exited with code 3`),
		},
		{
			name: "failed without a container to blame",
			pod:  newPod(corev1.PodFailed, reason("DeadlineExceeded", "Pod was active on the node longer than the specified deadline")),
			want: result(podoutcome.OutcomeFailed, "", "pod failed: Pod was active on the node longer than the specified deadline"),
		},
		{
			name: "failed and being deleted is still a failure",
			pod:  newPod(corev1.PodFailed, deleting),
			want: terminating(result(podoutcome.OutcomeFailed, "", "pod failed")),
		},

		// Deleted.
		{
			name: "deleted while pending",
			pod:  newPod(corev1.PodPending, deleting),
			want: terminating(result(podoutcome.OutcomeDeleted, "", `pod is being deleted in phase "Pending"`)),
		},
		{
			name: "deleted while running",
			pod:  newPod(corev1.PodRunning, deleting, statuses(running("test"))),
			want: terminating(result(podoutcome.OutcomeDeleted, "", `pod is being deleted in phase "Running"`)),
		},
		{
			name: "deleted without a phase",
			pod:  newPod("", deleting),
			want: terminating(result(podoutcome.OutcomeDeleted, "", `pod is being deleted in phase "Pending"`)),
		},
		{
			name: "deleted in an unrecognised phase",
			pod:  newPod("Paused", deleting),
			want: terminating(result(podoutcome.OutcomeDeleted, "", `pod is being deleted in phase "Paused"`)),
		},

		// In progress.
		{name: "pending", pod: newPod(corev1.PodPending), want: result(podoutcome.OutcomePending, "", "pod is pending")},
		{name: "empty phase is pending", pod: newPod(""), want: result(podoutcome.OutcomePending, "", "pod is pending")},
		{name: "running", pod: newPod(corev1.PodRunning, statuses(running("test"))), want: result(podoutcome.OutcomeRunning, "", "pod is running")},
		{
			name: "running, a container exited normally",
			pod:  newPod(corev1.PodRunning, containers("a", "test"), statuses(terminated("a", 0, "Completed", finished), running("test"))),
			want: result(podoutcome.OutcomeRunning, "", "pod is running"),
		},
		{name: "unrecognised phase", pod: newPod("Paused"), want: result(podoutcome.OutcomeOtherPhase, "", `pod is in unrecognised phase "Paused"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			got, err := podoutcome.Classify(tt.pod)
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify() mismatch (-want +got):\n%s", diff)
			}
			assert.Equal(t, before, tt.pod, "Classify modified the pod")
		})
	}
}

func TestClassifyNilPod(t *testing.T) {
	got, err := podoutcome.Classify(nil)
	assert.EqualError(t, err, "podoutcome: pod=nil: a pod is required; a missing pod is recreated, not classified")
	assert.ErrorIs(t, err, plaindl.ErrInvalidInput)
	assert.Equal(t, podoutcome.Result{}, got)
}
