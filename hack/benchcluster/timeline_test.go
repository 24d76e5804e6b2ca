package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodTimeline(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(s int) metav1.Time { return metav1.NewTime(start.Add(time.Duration(s) * time.Second)) }
	pod := func(created, finished, written int, finishedOK bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(created)}}
		w, k, ks := at(written), at(written+100), at(written+200)
		p.ManagedFields = []metav1.ManagedFieldsEntry{
			{Manager: "jobkit-clientgo", Operation: metav1.ManagedFieldsOperationUpdate, Time: &w},
			{Manager: "kwok", Operation: metav1.ManagedFieldsOperationUpdate, Time: &k},
			{Manager: "jobkit-clientgo", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &ks},
		}
		if finishedOK {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(finished)}}}}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"none", nil, "created - s, finished - s, released - s (half/all)"},
		{"one", []corev1.Pod{pod(1, 5, 6, true)}, "created 1/1 s, finished 5/5 s, released 6/6 s (half/all)"},
		{"three, one not finished", []corev1.Pod{pod(3, 9, 12, true), pod(1, 0, 2, false), pod(2, 7, 8, true)},
			"created 2/3 s, finished 7/9 s, released 8/12 s (half/all)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podTimeline(tc.pods, start).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
