package deadlines_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/deadlines"
)

func ExampleCheck() {
	created := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-1", CreationTimestamp: metav1.NewTime(created)},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	timeouts := plaindl.DefaultTimeouts()

	// Not scheduled yet: requeue when the unscheduled timeout would expire.
	r, _ := deadlines.Check(pod, timeouts, created.Add(90*time.Second))
	fmt.Printf("%s: expired=%v, requeue after %v\n", r.Kind, r.Expired, r.Remaining)

	// The scheduler never found a node.
	r, _ = deadlines.Check(pod, timeouts, created.Add(5*time.Minute))
	fmt.Printf("%s: expired=%v, %q\n", r.Kind, r.Expired, r.Reason)

	// Scheduled and running for a day: measured from status.startTime.
	start := metav1.NewTime(created.Add(time.Minute))
	pod.Status.StartTime = &start
	pod.Status.Phase = corev1.PodRunning
	r, _ = deadlines.Check(pod, timeouts, created.Add(24*time.Hour))
	fmt.Printf("%s: expired=%v, requeue after %v\n", r.Kind, r.Expired, r.Remaining)
	// Output:
	// Unscheduled: expired=false, requeue after 3m30s
	// Unscheduled: expired=true, "Pod scheduling timeout."
	// Running: expired=false, requeue after 24h1m0s
}

func ExampleValidateTimeouts() {
	t := plaindl.Timeouts{Unscheduled: time.Minute, Pending: -time.Second}
	for _, err := range deadlines.ValidateTimeouts(t, nil) {
		fmt.Println(err)
	}
	// Output:
	// pending: Invalid value: "-1s": must not be negative (0 means no timeout)
}
