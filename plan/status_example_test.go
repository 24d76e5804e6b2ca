package plan_test

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plan"
)

// BatchRunStatus is the status of a custom resource in its own shape: a phase,
// metav1 conditions and worker counts, with plan.Tracking for what jobkit must get
// back exactly.
type BatchRunStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Workers    Workers            `json:"workers"`
	Tracking   plan.Tracking      `json:"tracking,omitempty"`
}

// Workers are the pod counts, under the resource's own names.
type Workers struct {
	Running  int32 `json:"running"`
	Ready    int32 `json:"ready"`
	Stopping int32 `json:"stopping"`
}

// jobStatus presents s to the plan (Workload.Status).
func (s *BatchRunStatus) jobStatus() batchv1.JobStatus {
	st := s.Tracking.JobStatus()
	st.Conditions = jobstatus.JobConditions(s.Conditions)
	st.Active, st.Ready, st.Terminating = s.Workers.Running, ptr.To(s.Workers.Ready), ptr.To(s.Workers.Stopping)
	return st
}

// setFrom stores what the plan wrote (Plan.Status, Settled.Status) in s.
func (s *BatchRunStatus) setFrom(st batchv1.JobStatus, generation int64) {
	s.Tracking.Set(&st)
	s.Conditions = jobstatus.MetaConditions(st.Conditions, generation)
	s.Workers = Workers{Running: st.Active, Ready: ptr.Deref(st.Ready, 0), Stopping: ptr.Deref(st.Terminating, 0)}
	s.Phase = phaseOf(&st)
}

func phaseOf(st *batchv1.JobStatus) string {
	if t, ok := jobstatus.Finished(st); ok {
		if t == batchv1.JobComplete {
			return "Succeeded"
		}
		return "Failed"
	}
	switch {
	case jobstatus.IsConditionTrue(st.Conditions, batchv1.JobSuspended):
		return "Suspended"
	case st.StartTime != nil:
		return "Running"
	}
	return "Pending"
}

// A custom resource with its own status shape: a few lines convert it both ways,
// and CheckStatusRoundTrip proves in a test that nothing of the contract is lost.
func ExampleCheckStatusRoundTrip() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var status BatchRunStatus // a new BatchRun
	w := &plan.Workload{
		Namespace: "batch", Name: "nightly", UID: "br-1",
		Spec: plan.Spec{
			Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2),
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "worker", Image: "batch"}},
			}},
		},
		Status: status.jobStatus(),
	}
	p, err := plan.Compute(plan.Input{Workload: w, Owner: trainingKind, ControllerName: "example.com/batchrun", ExpectationsSatisfied: true, Now: now})
	if err != nil {
		panic(err)
	}
	status.setFrom(p.Status, 1)
	fmt.Printf("%s, %+v, started %s\n", status.Phase, status.Workers, status.Tracking.StartTime.UTC().Format(time.Kitchen))

	err = plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus {
		var s BatchRunStatus
		s.setFrom(st, 1)
		return s.jobStatus()
	})
	fmt.Println("round trip:", err)

	// A conversion that keeps failedIndexes as a plain string loses "none failed yet"
	// ("" set) against "not tracked" (unset), and the plan would write every sync.
	err = plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus {
		var s BatchRunStatus
		s.setFrom(st, 1)
		out := s.jobStatus()
		if out.FailedIndexes != nil && *out.FailedIndexes == "" {
			out.FailedIndexes = nil
		}
		return out
	})
	fmt.Println(err)
	// Output:
	// Running, {Running:2 Ready:0 Stopping:0}, started 12:00PM
	// round trip: <nil>
	// status "indexed, no failed index": failedIndexes lost: wrote "", read back unset
}
