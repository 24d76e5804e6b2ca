package jobstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMetaConditions(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC))
	probe := metav1.NewTime(at.Add(time.Minute))
	tests := []struct {
		name     string
		in       []batchv1.JobCondition
		wantMeta []metav1.Condition
		wantBack []batchv1.JobCondition // nil: in without lastProbeTime
	}{
		{name: "nil", in: nil},
		{name: "empty", in: []batchv1.JobCondition{}, wantMeta: []metav1.Condition{}},
		{
			name: "every field but lastProbeTime survives",
			in: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "TrainingJob has reached the specified backoff limit", LastTransitionTime: at, LastProbeTime: probe},
				{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed", Message: "TrainingJob resumed", LastTransitionTime: at},
			},
			wantMeta: []metav1.Condition{
				{Type: "FailureTarget", Status: metav1.ConditionTrue, ObservedGeneration: 4, Reason: "BackoffLimitExceeded", Message: "TrainingJob has reached the specified backoff limit", LastTransitionTime: at},
				{Type: "Suspended", Status: metav1.ConditionFalse, ObservedGeneration: 4, Reason: "JobResumed", Message: "TrainingJob resumed", LastTransitionTime: at},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := MetaConditions(tt.in, 4)
			if diff := cmp.Diff(tt.wantMeta, meta); diff != "" {
				t.Errorf("MetaConditions (-want +got):\n%s", diff)
			}
			wantBack := tt.wantBack
			if wantBack == nil && tt.in != nil {
				wantBack = make([]batchv1.JobCondition, len(tt.in))
				for i, c := range tt.in {
					c.LastProbeTime = metav1.Time{}
					wantBack[i] = c
				}
			}
			if diff := cmp.Diff(wantBack, JobConditions(meta)); diff != "" {
				t.Errorf("JobConditions(MetaConditions(in)) (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("shares nothing", func(t *testing.T) {
		in := []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached"}}
		meta := MetaConditions(in, 1)
		meta[0].Reason = "changed"
		back := JobConditions(meta)
		back[0].Message = "changed"
		if in[0].Reason != "CompletionsReached" || meta[0].Message != "" {
			t.Errorf("a conversion shares memory with its input: in %+v, meta %+v", in[0], meta[0])
		}
	})
}
