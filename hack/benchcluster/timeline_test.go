package main

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodTimeline(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(s int) metav1.Time { return metav1.NewTime(start.Add(time.Duration(s) * time.Second)) }
	pod := func(created, finished int, finishedOK bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: at(created)}}
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
		{"none", nil, "created - s, finished - s (half/all)"},
		{"one", []corev1.Pod{pod(1, 5, true)}, "created 1/1 s, finished 5/5 s (half/all)"},
		{"three, one not finished", []corev1.Pod{pod(3, 9, true), pod(1, 0, false), pod(2, 7, true)},
			"created 2/3 s, finished 7/9 s (half/all)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := podTimeline(tc.pods, start).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// An idle process settles after settleSamples idle seconds; a missing one is an
// error naming it.
func TestSettle(t *testing.T) {
	b := &bench{others: map[string]int{"self": os.Getpid()}}
	waited, settled, err := b.settle(t.Context())
	if err != nil || !settled {
		t.Fatalf("settle() = %v, %v, %v; want settled", waited, settled, err)
	}
	if waited < settleSamples*time.Second {
		t.Errorf("settled after %v, want at least %d idle seconds", waited, settleSamples)
	}
	b.others = map[string]int{"gone": 1 << 30}
	if _, _, err := b.settle(t.Context()); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("settle() with a missing process = %v, want an error naming it", err)
	}
}
