package childjobs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/childjobs"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func childJob(labels map[string]string, conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "js-workers-1", Namespace: "ns", Labels: labels},
		Status:     batchv1.JobStatus{Conditions: conds},
	}
}

func goodLabels() map[string]string {
	return map[string]string{
		plaingroup.LabelRoleName:          "workers",
		plaingroup.LabelJobIndex:          "1",
		plaingroup.LabelRestartAttempt:    "2",
		plaingroup.LabelJobRestartAttempt: "3",
	}
}

func cond(t batchv1.JobConditionType, s corev1.ConditionStatus, reason string, at time.Time) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: s, Reason: reason, Message: reason + " message", LastTransitionTime: metav1.NewTime(at)}
}

func TestReadChildOutcome(t *testing.T) {
	at := t0.Add(time.Minute)
	tests := []struct {
		name        string
		conds       []batchv1.JobCondition
		wantOutcome plaingroup.Outcome
		wantReason  string
	}{
		{name: "no condition", wantOutcome: plaingroup.Running},
		{name: "complete", conds: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "SuccessPolicy", t0), cond(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", at)},
			wantOutcome: plaingroup.Succeeded, wantReason: "CompletionsReached"},
		{name: "failed", conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue, "PodFailurePolicy", t0), cond(batchv1.JobFailed, corev1.ConditionTrue, "PodFailurePolicy", at)},
			wantOutcome: plaingroup.Failed, wantReason: "PodFailurePolicy"},
		{name: "failure target alone still runs", conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue, "BackoffLimitExceeded", at)},
			wantOutcome: plaingroup.Running},
		{name: "success criteria met alone still runs", conds: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "SuccessPolicy", at)},
			wantOutcome: plaingroup.Running},
		{name: "failed false is not failed", conds: []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionFalse, "X", at)},
			wantOutcome: plaingroup.Running},
		{name: "suspended condition", conds: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", at)},
			wantOutcome: plaingroup.Running},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childjobs.ReadChild(childJob(goodLabels(), tc.conds...))
			require.NoError(t, err)
			assert.Equal(t, tc.wantOutcome, got.Outcome)
			assert.Equal(t, tc.wantReason, got.Reason)
			if tc.wantOutcome != plaingroup.Running {
				assert.Equal(t, tc.wantReason+" message", got.Message)
				assert.True(t, got.FinishedAt.Equal(at), "FinishedAt = %v, want %v", got.FinishedAt, at)
			} else {
				assert.True(t, got.FinishedAt.IsZero())
			}
		})
	}
}

func TestReadChildFacts(t *testing.T) {
	j := childJob(goodLabels())
	j.Spec.Suspend = ptr.To(true)
	j.DeletionTimestamp = &metav1.Time{Time: t0}
	j.Status.Ready, j.Status.Active, j.Status.Succeeded, j.Status.Failed = ptr.To[int32](2), 3, 4, 5
	j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](6), ptr.To[int32](7)
	got, err := childjobs.ReadChild(j)
	require.NoError(t, err)
	want := plaingroup.Child{
		Name: "js-workers-1", Role: "workers", Index: 1, Attempt: 2, JobAttempt: 3,
		Ready: 2, Active: 3, Succeeded: 4, Failed: 5, Suspended: true, Deleting: true,
		Parallelism: 6, Completions: ptr.To[int32](7),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadChild (-want +got):\n%s", diff)
	}
}

func TestReadChildLabels(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(j *batchv1.Job)
		wantField string
		wantValue any
		want      plaingroup.Child // checked when wantField is ""
	}{
		{name: "missing role", edit: func(j *batchv1.Job) { delete(j.Labels, plaingroup.LabelRoleName) },
			wantField: "metadata.labels[jobset.sigs.k8s.io/replicatedjob-name]", wantValue: ""},
		{name: "missing index", edit: func(j *batchv1.Job) { delete(j.Labels, plaingroup.LabelJobIndex) },
			wantField: "metadata.labels[jobset.sigs.k8s.io/job-index]"},
		{name: "index not a number", edit: func(j *batchv1.Job) { j.Labels[plaingroup.LabelJobIndex] = "one" },
			wantField: "metadata.labels[jobset.sigs.k8s.io/job-index]", wantValue: "one"},
		{name: "negative index", edit: func(j *batchv1.Job) { j.Labels[plaingroup.LabelJobIndex] = "-1" },
			wantField: "metadata.labels[jobset.sigs.k8s.io/job-index]", wantValue: "-1"},
		{name: "index beyond int32", edit: func(j *batchv1.Job) { j.Labels[plaingroup.LabelJobIndex] = "4294967296" },
			wantField: "metadata.labels[jobset.sigs.k8s.io/job-index]", wantValue: "4294967296"},
		{name: "missing restart attempt", edit: func(j *batchv1.Job) { delete(j.Labels, plaingroup.LabelRestartAttempt) },
			wantField: "metadata.labels[jobset.sigs.k8s.io/restart-attempt]"},
		{name: "bad job restart attempt", edit: func(j *batchv1.Job) { j.Labels[plaingroup.LabelJobRestartAttempt] = "x" },
			wantField: "metadata.labels[jobset.sigs.k8s.io/job-restart-attempt]", wantValue: "x"},
		{name: "negative active", edit: func(j *batchv1.Job) { j.Status.Active = -1 },
			wantField: "status.active", wantValue: int32(-1)},
		{name: "missing job restart attempt is 0", edit: func(j *batchv1.Job) { delete(j.Labels, plaingroup.LabelJobRestartAttempt) },
			want: plaingroup.Child{Name: "js-workers-1", Role: "workers", Index: 1, Attempt: 2, Parallelism: 1}},
		{name: "annotations stand in for labels", edit: func(j *batchv1.Job) {
			j.Annotations = j.Labels
			j.Labels = map[string]string{plaingroup.LabelJobIndex: "7"}
		}, want: plaingroup.Child{Name: "js-workers-1", Role: "workers", Index: 7, Attempt: 2, JobAttempt: 3, Parallelism: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := childJob(goodLabels())
			tc.edit(j)
			got, err := childjobs.ReadChild(j)
			if tc.wantField == "" {
				require.NoError(t, err)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("ReadChild (-want +got):\n%s", diff)
				}
				return
			}
			var fe *fielderr.Error
			require.True(t, errors.As(err, &fe), "ReadChild error = %v, want a *fielderr.Error", err)
			assert.Equal(t, tc.wantField, fe.Field)
			assert.Equal(t, tc.wantValue, fe.BadValue)
			assert.Contains(t, err.Error(), "ns/js-workers-1", "the error names the Job")
			assert.Equal(t, plaingroup.Child{}, got)
		})
	}
}

func TestReadChildNil(t *testing.T) {
	_, err := childjobs.ReadChild(nil)
	var fe *fielderr.Error
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, "job", fe.Field)
}

// Input.Validate sizes the roles from their templates before plaingroup's
// checks: a coordinator's pod index is checked against the template's pods.
func TestInputValidate(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*childjobs.Input)
		wantField string // "" means valid
	}{
		{name: "valid", mutate: func(*childjobs.Input) {}},
		{name: "coordinator pod index within the template's pods", mutate: func(in *childjobs.Input) {
			in.Spec.Coordinator = &plaingroup.Coordinator{ReplicatedJob: "workers", PodIndex: 1}
		}},
		{name: "coordinator pod index beyond the template's pods", mutate: func(in *childjobs.Input) {
			in.Spec.Coordinator = &plaingroup.Coordinator{ReplicatedJob: "workers", PodIndex: 2}
		}, wantField: "coordinator.podIndex"},
		{name: "a negative parallelism in a template", mutate: func(in *childjobs.Input) {
			in.Templates[1].Spec.Parallelism = ptr.To[int32](-1)
		}, wantField: "parallelism"},
		{name: "duplicate role names", mutate: func(in *childjobs.Input) { in.Spec.Roles[1].Name = "leader" }, wantField: "replicatedJobs[1].name"},
		{name: "fewer templates than roles: sized where a template is", mutate: func(in *childjobs.Input) {
			in.Templates = in.Templates[:1]
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := leaderWorkers(2)
			tt.mutate(in)
			errs := in.Validate()
			if tt.wantField == "" {
				if len(errs) > 0 {
					t.Errorf("Validate() = %v, want no error", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tt.wantField) {
				t.Errorf("Validate() = %v, want an error on %s", errs, tt.wantField)
			}
			if in.Spec.Roles[0].Parallelism != 0 {
				t.Errorf("Validate modified the Input's roles: %+v", in.Spec.Roles)
			}
		})
	}
}
