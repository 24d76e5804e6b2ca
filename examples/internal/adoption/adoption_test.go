package adoption_test

import (
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/examples/internal/adoption"
)

func TestMatchingJobs(t *testing.T) {
	const ns = "ns"
	deleting := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sel := func(name string, labels map[string]string, mod ...func(*batchv1.Job)) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if labels != nil {
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		for _, m := range mod {
			m(j)
		}
		return j
	}
	match := sel("match", map[string]string{"app": "x"})
	jobs := []*batchv1.Job{
		match,
		sel("other-labels", map[string]string{"app": "y"}),
		sel("no-selector", nil),
		sel("empty-selector", map[string]string{}),
		sel("other-namespace", map[string]string{"app": "x"}, func(j *batchv1.Job) { j.Namespace = "elsewhere" }),
		sel("deleting", map[string]string{"app": "x"}, func(j *batchv1.Job) { j.DeletionTimestamp = &deleting }),
		sel("invalid", nil, func(j *batchv1.Job) {
			j.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
		}),
		nil,
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p", Labels: map[string]string{"app": "x"}}}
	if got := adoption.MatchingJobs(pod, jobs); len(got) != 1 || got[0] != match {
		t.Errorf("MatchingJobs() = %v, want only the Job %q", got, match.Name)
	}
	if got := adoption.MatchingJobs(nil, jobs); got != nil {
		t.Errorf("MatchingJobs(nil pod) = %v, want nil", got)
	}
}

// MatchingJobs finds the Jobs that may adopt an orphan pod.
func ExampleMatchingJobs() {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stray", Labels: map[string]string{"app": "pi"}}}
	jobs := []*batchv1.Job{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pi"}, Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e"}, Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e"}}}},
	}
	for _, j := range adoption.MatchingJobs(pod, jobs) {
		fmt.Println(j.Name)
	}
	// Output:
	// pi
}
