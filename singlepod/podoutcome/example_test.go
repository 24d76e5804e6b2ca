package podoutcome_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/podoutcome"
)

func ExampleClassify() {
	finished := metav1.NewTime(time.Date(2026, time.March, 1, 12, 30, 0, 0, time.UTC))
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}, {Name: "upload"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodSucceeded,
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "test", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: finished}}},
				{Name: "upload", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: finished}}},
			},
		},
	}
	r, _ := podoutcome.Classify(pod)
	fmt.Println(r.Outcome, r.Container)
	fmt.Println(r.Message)
	// Output:
	// FalseSuccess upload
	// pod is in phase Succeeded but container "upload" exited with code 1
}

func ExampleNext() {
	opts := podoutcome.Options{MaxRevivals: 1}
	evicted := podoutcome.Result{Outcome: podoutcome.OutcomeEvicted, PodUID: "pod-a"}

	// The first eviction replaces the pod. Store step.Revivals on the job
	// before deleting the pod.
	step, _ := podoutcome.Next(evicted, plaindl.Result{}, podoutcome.Revivals{}, opts)
	fmt.Println(step.Action, step.Revivals.Count, step.DeletePod)

	// The second pod is evicted too: the limit is reached.
	evicted.PodUID = "pod-b"
	step, _ = podoutcome.Next(evicted, plaindl.Result{}, step.Revivals, opts)
	fmt.Println(step.Action, step.Reason)
	fmt.Println(step.Message)
	// Output:
	// Retry 1 true
	// Error MaxRevivals
	// Job pod reached max revivals (1) after being stopped unexpectedly (evicted)
}

func ExampleDecide() {
	created := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-1", UID: "pod-a", CreationTimestamp: metav1.NewTime(created)},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	opts := podoutcome.Options{MaxRevivals: podoutcome.DefaultMaxRevivals, Timeouts: plaindl.DefaultTimeouts()}

	for _, after := range []time.Duration{time.Minute, 5 * time.Minute} {
		step, err := podoutcome.Decide(pod, podoutcome.Revivals{}, opts, created.Add(after))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("after %v: %s %q delete=%v requeue=%v\n", after, step.Action, step.Message, step.DeletePod, step.RequeueAfter)
	}
	// Output:
	// after 1m0s: Wait "pod is pending" delete=false requeue=4m0s
	// after 5m0s: Error "Pod scheduling timeout." delete=true requeue=0s
}
