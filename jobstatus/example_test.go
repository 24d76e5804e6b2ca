package jobstatus_test

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/jobstatus"
)

func ExampleValidateUpdate() {
	start := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	old := &batchv1.Job{Status: batchv1.JobStatus{StartTime: &start, Active: 1}}
	cur := old.DeepCopy()
	// Writing Failed directly, without the FailureTarget step, is refused.
	cur.Status.Active = 0
	cur.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	for _, err := range jobstatus.ValidateUpdate(old, cur) {
		fmt.Println(err)
	}
	// Output:
	// status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition
}

func ExampleSetCondition() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	conds, changed := jobstatus.SetCondition(nil,
		jobstatus.NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended"), now)
	fmt.Println(changed, conds[0].Type, conds[0].Status, conds[0].LastTransitionTime.UTC().Format(time.RFC3339))

	// Setting it again changes nothing, so nothing needs to be written.
	_, changed = jobstatus.SetCondition(conds,
		jobstatus.NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended"), now.Add(time.Hour))
	fmt.Println(changed)
	// Output:
	// true Suspended True 2026-01-01T12:00:00Z
	// false
}

func ExampleFinished() {
	st := &batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
	}}
	_, done := jobstatus.Finished(st)
	fmt.Println(done)
	st.Conditions = append(st.Conditions, batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue})
	t, done := jobstatus.Finished(st)
	fmt.Println(t, done)
	// Output:
	// false
	// Complete true
}

// A custom resource that keeps its conditions as metav1.Conditions converts them for
// the plan and back; only lastProbeTime, which nothing reads, is lost.
func ExampleMetaConditions() {
	at := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	job := []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached",
		Message: "Reached expected number of succeeded pods", LastTransitionTime: at, LastProbeTime: at}}
	meta := jobstatus.MetaConditions(job, 7)
	fmt.Println(meta[0].Type, meta[0].Status, meta[0].Reason, meta[0].ObservedGeneration)
	back := jobstatus.JobConditions(meta)
	done, finished := jobstatus.Finished(&batchv1.JobStatus{Conditions: back})
	fmt.Println(done, finished, back[0].LastProbeTime.IsZero())
	// Output:
	// Complete True CompletionsReached 7
	// Complete true true
}
