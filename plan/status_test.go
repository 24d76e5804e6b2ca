package plan_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/plan"
)

// batchRunRoundTrip converts through BatchRunStatus and its JSON, as an API server
// stores it.
func batchRunRoundTrip(t *testing.T) func(batchv1.JobStatus) batchv1.JobStatus {
	return func(st batchv1.JobStatus) batchv1.JobStatus {
		var s BatchRunStatus
		s.setFrom(st, 3)
		data, err := json.Marshal(&s)
		require.NoError(t, err)
		var back BatchRunStatus
		require.NoError(t, json.Unmarshal(data, &back))
		return back.jobStatus()
	}
}

func TestCheckStatusRoundTrip(t *testing.T) {
	require.NoError(t, plan.CheckStatusRoundTrip(batchRunRoundTrip(t)), "the example's conversion, through JSON")
	require.NoError(t, plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus { return st }), "the identity")

	tests := []struct {
		field string // named in the error
		drop  func(*batchv1.JobStatus)
	}{
		{"startTime", func(st *batchv1.JobStatus) { st.StartTime = nil }},
		{"completionTime", func(st *batchv1.JobStatus) { st.CompletionTime = nil }},
		{"active", func(st *batchv1.JobStatus) { st.Active = 0 }},
		{"ready", func(st *batchv1.JobStatus) { st.Ready = nil }},
		{"terminating", func(st *batchv1.JobStatus) { st.Terminating = nil }},
		{"succeeded", func(st *batchv1.JobStatus) { st.Succeeded = 0 }},
		{"failed", func(st *batchv1.JobStatus) { st.Failed = 0 }},
		{"completedIndexes", func(st *batchv1.JobStatus) { st.CompletedIndexes = "" }},
		{"failedIndexes", func(st *batchv1.JobStatus) { st.FailedIndexes = nil }},
		{"uncountedTerminatedPods", func(st *batchv1.JobStatus) { st.UncountedTerminatedPods = nil }},
		{"uncountedTerminatedPods", func(st *batchv1.JobStatus) {
			if u := st.UncountedTerminatedPods; u != nil {
				u.Failed = nil
			}
		}},
		{"conditions", func(st *batchv1.JobStatus) { st.Conditions = nil }},
		{"conditions", func(st *batchv1.JobStatus) {
			for i := range st.Conditions {
				st.Conditions[i].Reason = ""
			}
		}},
		{"conditions", func(st *batchv1.JobStatus) {
			for i := range st.Conditions {
				st.Conditions[i].LastTransitionTime = metav1.Time{}
			}
		}},
		{"startTime", func(st *batchv1.JobStatus) { // a time off by more than the second JSON keeps
			if st.StartTime != nil {
				st.StartTime = &metav1.Time{Time: st.StartTime.Add(time.Second)}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			good := batchRunRoundTrip(t)
			err := plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus {
				out := good(st)
				tt.drop(&out)
				return out
			})
			require.Error(t, err, "dropping %s goes unnoticed", tt.field)
			for _, line := range strings.Split(err.Error(), "\n") {
				assert.Contains(t, line, " "+tt.field+" lost: ", "every line names the field")
			}
		})
	}

	t.Run("lastProbeTime may go", func(t *testing.T) {
		err := plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus {
			for i := range st.Conditions {
				st.Conditions[i].LastProbeTime = metav1.Time{}
			}
			return st
		})
		assert.NoError(t, err)
	})
}

// TestTrackingSetCopies: Set copies, so the resource's status does not share
// memory with the plan's output.
func TestTrackingSetCopies(t *testing.T) {
	fi := "1"
	st := batchv1.JobStatus{
		StartTime: &metav1.Time{Time: exampleNow}, FailedIndexes: &fi,
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Failed: nil, Succeeded: nil},
	}
	var tr plan.Tracking
	tr.Set(&st)
	fi = "2"
	st.StartTime.Time = exampleNow.Add(time.Hour)
	assert.Equal(t, "1", *tr.FailedIndexes)
	assert.Equal(t, exampleNow, tr.StartTime.Time)
	assert.NotSame(t, st.UncountedTerminatedPods, tr.UncountedTerminatedPods)
	back := tr.JobStatus()
	assert.Equal(t, "1", *back.FailedIndexes)
	assert.Nil(t, (*plan.Tracking)(nil).DeepCopy())
}
