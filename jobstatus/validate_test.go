package jobstatus

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func cond(t batchv1.JobConditionType) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue}
}

type jobOpt func(*batchv1.Job)

func mkJob(opts ...jobOpt) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"},
		Spec:       batchv1.JobSpec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](2)},
		Status:     batchv1.JobStatus{StartTime: &t0},
	}
	for _, o := range opts {
		o(j)
	}
	return j
}

func withConds(ts ...batchv1.JobConditionType) jobOpt {
	return func(j *batchv1.Job) {
		for _, t := range ts {
			j.Status.Conditions = append(j.Status.Conditions, cond(t))
		}
	}
}
func withStatus(f func(*batchv1.JobStatus)) jobOpt { return func(j *batchv1.Job) { f(&j.Status) } }
func withSpec(f func(*batchv1.JobSpec)) jobOpt     { return func(j *batchv1.Job) { f(&j.Spec) } }

var indexed = withSpec(func(s *batchv1.JobSpec) { s.CompletionMode = ptr.To(batchv1.IndexedCompletion) })

// summary renders errors as "path: detail" so expectations read like the API's output.
func summary(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		d := e.Detail
		if d == "" {
			d = string(e.Type)
		}
		out = append(out, e.Field+": "+d)
	}
	return out
}

func TestValidateUpdate(t *testing.T) {
	cases := []struct {
		name     string
		old, cur *batchv1.Job
		want     []string // substrings, one per expected error, in order
	}{
		{
			name: "valid progress",
			old:  mkJob(),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Active = 2; s.Ready = ptr.To[int32](1); s.Succeeded = 1 })),
		},
		{
			name: "negative counters",
			old:  mkJob(),
			cur: mkJob(withStatus(func(s *batchv1.JobStatus) {
				s.Active = -1
				s.Ready = ptr.To[int32](-2)
				s.Terminating = ptr.To[int32](-1)
			})),
			want: []string{"status.active: must be greater than or equal to 0", "status.ready: must be greater", "status.terminating: must be greater"},
		},
		{
			name: "uncounted empty and duplicate UIDs",
			old:  mkJob(),
			cur: mkJob(withStatus(func(s *batchv1.JobStatus) {
				s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a", ""}, Failed: []types.UID{"a"}}
			})),
			want: []string{"status.uncountedTerminatedPods.succeeded[1]: must not be empty", "status.uncountedTerminatedPods.failed[0]: FieldValueDuplicate"},
		},
		{
			name: "failed without failure target",
			old:  mkJob(),
			cur:  mkJob(withConds(batchv1.JobFailed)),
			want: []string{"status.conditions: cannot set Failed=True condition without the FailureTarget=true condition"},
		},
		{
			name: "failed after failure target",
			old:  mkJob(withConds(batchv1.JobFailureTarget)),
			cur:  mkJob(withConds(batchv1.JobFailureTarget, batchv1.JobFailed)),
		},
		{
			name: "complete without success criteria met",
			old:  mkJob(),
			cur:  mkJob(withConds(batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			want: []string{"cannot set Complete=True condition without the SuccessCriteriaMet=true condition"},
		},
		{
			name: "complete without completion time",
			old:  mkJob(withConds(batchv1.JobSuccessCriteriaMet)),
			cur:  mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)),
			want: []string{"status.completionTime: completionTime is required for Complete jobs"},
		},
		{
			name: "completion time without complete",
			old:  mkJob(),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			want: []string{"status.completionTime: cannot set completionTime when there is no Complete=True condition"},
		},
		{
			name: "completion time before start time",
			old:  mkJob(withConds(batchv1.JobSuccessCriteriaMet)),
			cur: mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) {
				s.StartTime = &t1
				s.CompletionTime = &t0
			})),
			want: []string{"completionTime cannot be set before startTime", "startTime cannot be removed for unsuspended job"},
		},
		{
			name: "complete and successful",
			old:  mkJob(withConds(batchv1.JobSuccessCriteriaMet)),
			cur:  mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1; s.Succeeded = 5 })),
		},
		{
			name: "complete with failed and failure target",
			old:  mkJob(withConds(batchv1.JobFailureTarget)),
			cur: mkJob(withConds(batchv1.JobFailureTarget, batchv1.JobFailed, batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) {
				s.CompletionTime = &t1
			})),
			want: []string{"cannot set Complete=True and Failed=true", "cannot set Complete=True and FailureTarget=true", "without the SuccessCriteriaMet=true"},
		},
		{
			name: "finished job with active, terminating, uncounted pods and no start time",
			old:  mkJob(withConds(batchv1.JobFailureTarget)),
			cur: mkJob(withConds(batchv1.JobFailureTarget, batchv1.JobFailed), withStatus(func(s *batchv1.JobStatus) {
				s.Active = 1
				s.Terminating = ptr.To[int32](1)
				s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"x"}}
				s.StartTime = nil
			})),
			want: []string{"status.active: active>0 is invalid for finished job", "status.startTime: startTime is required for finished job", "uncountedTerminatedPods needs to be empty", "terminating>0 is invalid", "startTime cannot be removed"},
		},
		{
			name: "ready above active",
			old:  mkJob(),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](2) })),
			want: []string{"status.ready: cannot set more ready pods than active"},
		},
		{
			name: "ready above active left alone is not checked",
			old:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](2) })),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](2); s.Failed = 1 })),
		},
		{
			name: "completed indexes on a non-indexed job",
			old:  mkJob(),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "1" })),
			want: []string{"cannot set non-empty completedIndexes when non-indexed completion mode"},
		},
		{
			name: "completed indexes out of range",
			old:  mkJob(indexed),
			cur:  mkJob(indexed, withStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "1,7" })),
			want: []string{"status.completedIndexes: error parsing completedIndexes: invalid index intervals \"1,7\": part 1 \"7\": index out of range"},
		},
		{
			name: "completed indexes out of order",
			old:  mkJob(indexed),
			cur:  mkJob(indexed, withStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "3,1" })),
			want: []string{"not in increasing order"},
		},
		{
			name: "failed indexes without backoffLimitPerIndex",
			old:  mkJob(indexed),
			cur:  mkJob(indexed, withStatus(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("") })),
			want: []string{"cannot set non-null failedIndexes when backoffLimitPerIndex is null"},
		},
		{
			name: "failed indexes overlap completed",
			old:  mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.BackoffLimitPerIndex = ptr.To[int32](1) })),
			cur: mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.BackoffLimitPerIndex = ptr.To[int32](1) }), withStatus(func(s *batchv1.JobStatus) {
				s.CompletedIndexes = "0-2"
				s.FailedIndexes = ptr.To("2,4")
			})),
			want: []string{"status.failedIndexes: failedIndexes and completedIndexes overlap at index: 2"},
		},
		{
			name: "terminal conditions cannot be disabled",
			old:  mkJob(withConds(batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet)),
			cur:  mkJob(),
			want: []string{"cannot disable the terminal FailureTarget=True condition", "cannot disable the SuccessCriteriaMet=True condition"},
		},
		{
			name: "success criteria met after complete",
			old:  mkJob(withConds(batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			cur:  mkJob(withConds(batchv1.JobComplete, batchv1.JobSuccessCriteriaMet), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			want: []string{"cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"},
		},
		{
			name: "success criteria met with failure target",
			old:  mkJob(),
			cur:  mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobFailureTarget)),
			want: []string{"cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"},
		},
		{
			name: "counters go backwards",
			old:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Failed = 2; s.Succeeded = 3 })),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Failed = 1; s.Succeeded = 2 })),
			want: []string{"status.failed: cannot decrease the failed counter", "status.succeeded: cannot decrease the succeeded counter"},
		},
		{
			name: "elastic indexed job may lower succeeded",
			old: mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.Completions = ptr.To[int32](2); s.Parallelism = ptr.To[int32](2) }),
				withStatus(func(s *batchv1.JobStatus) { s.Succeeded = 3; s.CompletedIndexes = "0-2" })),
			cur: mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.Completions = ptr.To[int32](2); s.Parallelism = ptr.To[int32](2) }),
				withStatus(func(s *batchv1.JobStatus) { s.Succeeded = 2; s.CompletedIndexes = "0,1" })),
		},
		{
			name: "completion time cannot change",
			old:  mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			cur: mkJob(withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) {
				s.CompletionTime = ptr.To(metav1.NewTime(t1.Add(time.Second)))
			})),
			want: []string{"status.completionTime: completionTime cannot be mutated"},
		},
		{
			name: "start time cleared on suspend",
			old:  mkJob(),
			cur:  mkJob(withSpec(func(s *batchv1.JobSpec) { s.Suspend = ptr.To(true) }), withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil })),
		},
		{
			name: "start time changed while unsuspended",
			old:  mkJob(),
			cur:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.StartTime = &t1 })),
			want: []string{"status.startTime: startTime cannot be removed for unsuspended job"},
		},
		{
			// kubernetes#134769: the update that resumes a Job sets a new start time,
			// even when a sync since the resume already wrote one.
			name: "start time changed in the update that resumes the Job",
			old:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended)} })),
			cur: mkJob(withStatus(func(s *batchv1.JobStatus) {
				s.StartTime = &t1
				s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse}}
			})),
		},
		{
			name: "start time changed after the resume was written",
			old: mkJob(withStatus(func(s *batchv1.JobStatus) {
				s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse}}
			})),
			cur: mkJob(withStatus(func(s *batchv1.JobStatus) {
				s.StartTime = &t1
				s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse}}
			})),
			want: []string{"status.startTime: startTime cannot be removed for unsuspended job"},
		},
		{
			name: "finished without start time",
			old:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil })),
			cur:  mkJob(withConds(batchv1.JobFailureTarget, batchv1.JobFailed), withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil })),
			want: []string{"status.startTime: startTime is required for finished job"},
		},
		{
			// kubernetes#132144: nothing ever starts, so there is no start time.
			name: "suspended Job with zero completions completes without start time",
			old: mkJob(withSpec(func(s *batchv1.JobSpec) { s.Suspend = ptr.To(true); s.Completions = ptr.To[int32](0) }),
				withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil })),
			cur: mkJob(withSpec(func(s *batchv1.JobSpec) { s.Suspend = ptr.To(true); s.Completions = ptr.To[int32](0) }),
				withConds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete),
				withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil; s.CompletionTime = &t1 })),
		},
		{
			name: "start time set for the first time",
			old:  mkJob(withStatus(func(s *batchv1.JobStatus) { s.StartTime = nil })),
			cur:  mkJob(),
		},
		{
			name: "complete with success policy needs success criteria met",
			old:  mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.SuccessPolicy = &batchv1.SuccessPolicy{} })),
			cur: mkJob(indexed, withSpec(func(s *batchv1.JobSpec) { s.SuccessPolicy = &batchv1.SuccessPolicy{} }),
				withConds(batchv1.JobComplete), withStatus(func(s *batchv1.JobStatus) { s.CompletionTime = &t1 })),
			want: []string{"without the SuccessCriteriaMet=true condition", "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := summary(ValidateUpdate(tc.old, tc.cur))
			if !assert.Len(t, got, len(tc.want), "ValidateUpdate errors = %q", got) {
				return
			}
			for i, w := range tc.want {
				assert.Contains(t, got[i], w, "ValidateUpdate error %d", i)
			}
		})
	}
}

func TestValidateIsStricterThanUpdate(t *testing.T) {
	// A status that was already invalid passes an unrelated update but not Validate.
	j := mkJob(withStatus(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](2) }))
	assert.Empty(t, ValidateUpdate(j, j))
	got := summary(Validate(j))
	assert.Equal(t, []string{"status.ready: cannot set more ready pods than active"}, got)
}

func TestValidateReportsEveryBadIndexPart(t *testing.T) {
	j := mkJob(indexed, withStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "x,1,9" }))
	errs := Validate(j)
	if assert.Len(t, errs, 1) {
		assert.True(t, strings.Contains(errs[0].Detail, `"x"`) && strings.Contains(errs[0].Detail, `"9"`), "detail %q names both bad parts", errs[0].Detail)
	}
}

func BenchmarkValidateUpdate(b *testing.B) {
	uids := make([]types.UID, 500)
	for i := range uids {
		uids[i] = types.UID(strings.Repeat("u", 8) + string(rune('a'+i%26)) + string(rune('a'+i/26)))
	}
	old := mkJob(indexed, withStatus(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,2" }))
	cur := mkJob(indexed, withStatus(func(s *batchv1.JobStatus) {
		s.CompletedIndexes = "0-3"
		s.Succeeded = 4
		s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: uids}
	}))
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateUpdate(old, cur); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
