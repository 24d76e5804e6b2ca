package podorder_test

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/podorder"
)

func examplePod(name, nodeName string, ph corev1.PodPhase, readySince time.Time) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         "default",
			Name:              name,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		},
		Spec:   corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: ph},
	}
	if !readySince.IsZero() {
		p.Status.Conditions = []corev1.PodCondition{{
			Type:               corev1.PodReady,
			Status:             corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(readySince),
		}}
	}
	return p
}

func ExampleSort() {
	morning := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{
		examplePod("ready-since-morning", "node-1", corev1.PodRunning, morning),
		examplePod("ready-since-noon", "node-1", corev1.PodRunning, morning.Add(4*time.Hour)),
		examplePod("starting", "node-2", corev1.PodRunning, time.Time{}),
		examplePod("scheduled", "node-2", corev1.PodPending, time.Time{}),
		examplePod("unscheduled", "", corev1.PodPending, time.Time{}),
	}
	podorder.Sort(pods)
	for _, p := range pods {
		fmt.Println(p.Name)
	}
	// Output:
	// unscheduled
	// scheduled
	// starting
	// ready-since-noon
	// ready-since-morning
}

func ExampleCompare() {
	running := examplePod("a", "node-1", corev1.PodRunning, time.Time{})
	pending := examplePod("b", "node-1", corev1.PodPending, time.Time{})
	fmt.Println(podorder.Compare(pending, running) < 0)

	// Compare fits the slices package; here, the two pods to remove first.
	pods := []*corev1.Pod{running, pending}
	slices.SortFunc(pods, podorder.Compare)
	fmt.Println(pods[0].Name)
	// Output:
	// true
	// b
}
