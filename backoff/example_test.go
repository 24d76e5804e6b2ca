package backoff_test

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/backoff"
	"github.com/jobkit/jobkit/owner"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

func ExampleAdvancePods() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	pod := func(phase corev1.PodPhase, finished time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}},
		}}}}
	}
	var rec plainbackoff.Record

	// One sync saw two pods fail.
	rec = backoff.AdvancePods(rec, nil, []*corev1.Pod{pod(corev1.PodFailed, t), pod(corev1.PodFailed, t.Add(time.Second))})
	fmt.Println(rec.Failures, rec.LastFailure.Format(time.TimeOnly), rec.Remaining(plainbackoff.Policy{}, t.Add(5*time.Second)))

	// The next one saw a success: the streak is over.
	rec = backoff.AdvancePods(rec, []*corev1.Pod{pod(corev1.PodSucceeded, t.Add(time.Minute))}, nil)
	fmt.Println(rec.Failures, rec.IsZero())
	// Output:
	// 2 12:00:01 16s
	// 0 true
}

func ExampleFinishTime() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{InitContainers: []corev1.Container{
			{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
		}},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(t)},
			}}},
			// The sidecar stops after the main container: the pod finished then.
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.NewTime(t.Add(2 * time.Second))},
			}}},
		},
	}
	fmt.Println(backoff.FinishTime(pod).Format(time.TimeOnly))

	// Deleted before any container status was recorded: deletion time minus grace.
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		DeletionTimestamp:          ptr.To(metav1.NewTime(t)),
		DeletionGracePeriodSeconds: ptr.To[int64](30),
	}}
	fmt.Println(backoff.FinishTime(orphan).Format(time.TimeOnly))
	// Output:
	// 12:00:02
	// 11:59:30
}

func ExampleFromPods() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	pod := func(phase corev1.PodPhase, finished time.Time) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finished)}},
		}}}}
	}
	// After a controller restart, the pods still tell the story.
	pods := []*corev1.Pod{
		pod(corev1.PodFailed, t),
		pod(corev1.PodSucceeded, t.Add(time.Minute)),
		pod(corev1.PodFailed, t.Add(2*time.Minute)),
		pod(corev1.PodFailed, t.Add(3*time.Minute)),
	}
	rebuilt := backoff.FromPods(pods)
	fmt.Println(rebuilt.Failures, rebuilt.LastFailure.Format(time.TimeOnly))

	var stored plainbackoff.Record // lost in the restart
	rec := plainbackoff.Merge(stored, rebuilt)
	fmt.Println(rec.Remaining(plainbackoff.Policy{}, t.Add(3*time.Minute+5*time.Second)))
	// Output:
	// 2 12:03:00
	// 15s
}

func ExampleIndexRemaining() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	lastFailed := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train-3-x7k2p", Annotations: map[string]string{
			batchv1.JobCompletionIndexAnnotation:          "3",
			batchv1.JobIndexFailureCountAnnotation:        "2",
			batchv1.JobIndexIgnoredFailureCountAnnotation: "1",
		}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(t)}},
		}}},
	}
	// The replacement of index 3 is its 4th attempt after failures: 10s·2^3.
	d, err := backoff.IndexRemaining(owner.BatchJob, lastFailed, plainbackoff.Policy{}, t.Add(30*time.Second))
	fmt.Println(d, err)

	lastFailed.Annotations[batchv1.JobIndexFailureCountAnnotation] = "two"
	// The bad value counts 0 (2nd attempt: 20s); the error says what to log.
	d, err = backoff.IndexRemaining(owner.BatchJob, lastFailed, plainbackoff.Policy{}, t.Add(5*time.Second))
	fmt.Println(d)
	fmt.Println(err)
	// Output:
	// 50s <nil>
	// 15s
	// backoff of the index of pod ns/train-3-x7k2p: pod ns/train-3-x7k2p: annotation batch.kubernetes.io/job-index-failure-count="two": not a non-negative 32-bit integer
}

func ExampleStore() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	var store backoff.Store[string] // safe for concurrent use by sync workers

	// One sync saw two new failed pods of ns/train.
	rec := store.Update("ns/train", func(r plainbackoff.Record) plainbackoff.Record {
		return r.Advance(nil, []time.Time{t, t.Add(time.Second)})
	})
	fmt.Println(rec.Failures, rec.Remaining(plainbackoff.Policy{}, t.Add(5*time.Second)))

	// The next one saw a success: the record is reset and no longer kept.
	store.Update("ns/train", func(r plainbackoff.Record) plainbackoff.Record {
		return r.Advance([]time.Time{t.Add(time.Minute)}, nil)
	})
	_, ok := store.Get("ns/train")
	fmt.Println(ok, store.Len())
	// Output:
	// 2 16s
	// false 0
}

// Of two failed pods of one index, the replacement is due for the later failure:
// the one with at least as many recorded failures that finished no earlier.
func ExampleLaterFailure() {
	t := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	failed := func(count string, finished time.Time) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{batchv1.JobIndexFailureCountAnnotation: count}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(finished)}}}}},
		}
	}
	first, second := failed("0", t), failed("1", t.Add(time.Minute))
	fmt.Println(backoff.LaterFailure(owner.BatchJob, second, first), backoff.LaterFailure(owner.BatchJob, first, second))
	// Output: true false
}
