package jobstatus

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetCondition(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tNow := metav1.NewTime(now)
	suspended := batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended", LastProbeTime: t0, LastTransitionTime: t0}
	cases := []struct {
		name        string
		in          []batchv1.JobCondition
		set         batchv1.JobCondition
		want        []batchv1.JobCondition
		wantChanged bool
	}{
		{
			name:        "absent true condition is appended",
			set:         NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended"),
			want:        []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "Job suspended", LastProbeTime: tNow, LastTransitionTime: tNow}},
			wantChanged: true,
		},
		{
			name: "absent false condition is not written",
			set:  NewCondition(batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed"),
		},
		{
			name:        "same condition changes nothing",
			in:          []batchv1.JobCondition{suspended},
			set:         NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended"),
			want:        []batchv1.JobCondition{suspended},
			wantChanged: false,
		},
		{
			name:        "status flip sets both times",
			in:          []batchv1.JobCondition{suspended},
			set:         NewCondition(batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed"),
			want:        []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed", Message: "Job resumed", LastProbeTime: tNow, LastTransitionTime: tNow}},
			wantChanged: true,
		},
		{
			name:        "message change keeps the transition time",
			in:          []batchv1.JobCondition{suspended},
			set:         NewCondition(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "other"),
			want:        []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", Message: "other", LastProbeTime: tNow, LastTransitionTime: t0}},
			wantChanged: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]batchv1.JobCondition(nil), tc.in...)
			got, changed := SetCondition(tc.in, tc.set, now)
			assert.Equal(t, tc.wantChanged, changed, "SetCondition changed")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetCondition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("SetCondition modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestFinished(t *testing.T) {
	cases := []struct {
		name  string
		conds []batchv1.JobCondition
		want  batchv1.JobConditionType
	}{
		{name: "no conditions"},
		{name: "interim conditions do not finish", conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobSuccessCriteriaMet)}},
		{name: "complete", conds: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}, want: batchv1.JobComplete},
		{name: "failed", conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed)}, want: batchv1.JobFailed},
		{name: "false failed does not finish", conds: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionFalse}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Finished(&batchv1.JobStatus{Conditions: tc.conds})
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want != "", IsFinished(&batchv1.JobStatus{Conditions: tc.conds}))
		})
	}
}

func BenchmarkSetConditionUnchanged(b *testing.B) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	conds := []batchv1.JobCondition{cond(batchv1.JobSuspended)}
	c := cond(batchv1.JobSuspended)
	b.ReportAllocs()
	for b.Loop() {
		SetCondition(conds, c, now)
	}
}
