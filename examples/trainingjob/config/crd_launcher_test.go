package config_test

// The CRD's checks of a run with a launcher: spec.launcher and spec.maxRestarts,
// their defaults and immutability, and the status of the group and its roles.

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
)

// validLauncher returns a small valid TrainingJob with a launcher named name.
func validLauncher(name string) *v1alpha1.TrainingJob {
	tj := valid(name)
	tj.Spec.MaxRestarts = ptr.To[int32](2)
	tj.Spec.Launcher = &v1alpha1.Launcher{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "launcher", Image: "registry.example/mpirun:1"}},
	}}}
	return tj
}

func TestInvalidLauncherSpecRejected(t *testing.T) {
	tests := []struct {
		name      string
		launcher  bool // start from validLauncher rather than valid
		edit      func(*v1alpha1.TrainingJobSpec)
		wantField string
		wantMsg   string
	}{
		{"negative launcher backoffLimit", true, func(s *v1alpha1.TrainingJobSpec) { s.Launcher.BackoffLimit = ptr.To[int32](-1) },
			"spec.launcher.backoffLimit", "greater than or equal to 0"},
		{"negative maxRestarts", true, func(s *v1alpha1.TrainingJobSpec) { s.MaxRestarts = ptr.To[int32](-1) },
			"spec.maxRestarts", "greater than or equal to 0"},
		{"maxRestarts without a launcher", false, func(s *v1alpha1.TrainingJobSpec) { s.MaxRestarts = ptr.To[int32](1) },
			"spec.maxRestarts", "maxRestarts needs a launcher"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
			if tt.launcher {
				tj = validLauncher(testName(t))
			}
			tt.edit(&tj.Spec)
			envtesting.RequireInvalid(t, k8s.Create(context.Background(), tj), tt.wantField, tt.wantMsg)
		})
	}
}

// A launcher without a template is refused as a missing field; the JSON is
// written by hand, since the Go type always has one.
func TestLauncherNeedsTemplate(t *testing.T) {
	tj := valid(testName(t))
	patch := []byte(`{"spec":{"launcher":{"backoffLimit":1}}}`)
	create(t, tj)
	err := k8s.Patch(context.Background(), tj, client.RawPatch(types.MergePatchType, patch))
	envtesting.RequireInvalid(t, err, "spec.launcher.template", "Required value")
}

// TestLauncherDefaults checks that a launcher without backoffLimit
// gets 0 and that a run without a launcher gets no launcher field and no
// maxRestarts: it is stored as it was before the launcher existed.
func TestLauncherDefaults(t *testing.T) {
	tj := validLauncher(testName(t))
	tj.Spec.MaxRestarts = nil
	create(t, tj)
	if got := tj.Spec.Launcher.BackoffLimit; got == nil || *got != 0 {
		t.Errorf("stored launcher.backoffLimit = %v, want 0", got)
	}
	if tj.Spec.MaxRestarts != nil {
		t.Errorf("stored maxRestarts = %d, want unset (the conversion reads unset as 0)", *tj.Spec.MaxRestarts)
	}
	plain := valid(testName(t) + "-plain")
	create(t, plain)
	if plain.Spec.Launcher != nil || plain.Spec.MaxRestarts != nil {
		t.Errorf("a run without a launcher was stored with launcher %v, maxRestarts %v", plain.Spec.Launcher, plain.Spec.MaxRestarts)
	}
}

func TestLauncherSpecUpdates(t *testing.T) {
	tests := []struct {
		name      string
		launcher  bool // start from validLauncher rather than valid
		edit      func(*v1alpha1.TrainingJobSpec)
		wantField string // empty: the update is accepted
		wantMsg   string
	}{
		{"parallelism may change", true, func(s *v1alpha1.TrainingJobSpec) { s.Parallelism = ptr.To[int32](1) }, "", ""},
		{"suspend may change", true, func(s *v1alpha1.TrainingJobSpec) { s.Suspend = ptr.To(true) }, "", ""},
		{"launcher added", false, func(s *v1alpha1.TrainingJobSpec) { s.Launcher = validLauncher("x").Spec.Launcher },
			"spec.launcher", "launcher is immutable"},
		{"launcher removed", true, func(s *v1alpha1.TrainingJobSpec) { s.Launcher, s.MaxRestarts = nil, nil },
			"spec.launcher", "launcher is immutable"},
		{"launcher template", true, func(s *v1alpha1.TrainingJobSpec) { s.Launcher.Template.Spec.Containers[0].Image = "other:2" },
			"spec.launcher", "launcher is immutable"},
		{"launcher backoffLimit", true, func(s *v1alpha1.TrainingJobSpec) { s.Launcher.BackoffLimit = ptr.To[int32](3) },
			"spec.launcher", "launcher is immutable"},
		{"maxRestarts changed", true, func(s *v1alpha1.TrainingJobSpec) { s.MaxRestarts = ptr.To[int32](5) },
			"spec.maxRestarts", "maxRestarts is immutable"},
		{"maxRestarts removed", true, func(s *v1alpha1.TrainingJobSpec) { s.MaxRestarts = nil },
			"spec.maxRestarts", "maxRestarts is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
			if tt.launcher {
				tj = validLauncher(testName(t))
			}
			create(t, tj)
			tt.edit(&tj.Spec)
			err := k8s.Update(context.Background(), tj)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("update refused: %v", err)
				}
				return
			}
			envtesting.RequireInvalid(t, err, tt.wantField, tt.wantMsg)
		})
	}
}

func TestLauncherStatusWrites(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(time.Hour))
	group := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Test", Message: "test", ObservedGeneration: 1, LastTransitionTime: start}
	}
	role := func(attempt, succeeded, failed int32, current v1alpha1.AttemptStatus) *v1alpha1.RoleStatus {
		return &v1alpha1.RoleStatus{Attempt: attempt, Succeeded: succeeded, Failed: failed, Current: current}
	}
	running := v1alpha1.TrainingJobStatus{
		Workers: role(0, 1, 1, v1alpha1.AttemptStatus{
			StartTime: &start, Active: 3, Ready: ptr.To[int32](3), Terminating: ptr.To[int32](0), Succeeded: 1, Failed: 1,
			CompletedIndexes: "0", FailedIndexes: ptr.To(""),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}},
		}),
		Launcher: role(0, 0, 0, v1alpha1.AttemptStatus{StartTime: &start, Active: 1, Ready: ptr.To[int32](0)}),
	}
	restarting := v1alpha1.TrainingJobStatus{
		Restarts: 1, RestartsCountTowardsMax: 1,
		GroupConditions: []metav1.Condition{group("RestartingJobSet", metav1.ConditionTrue)},
		Workers:         role(1, 1, 2, v1alpha1.AttemptStatus{}),
		Launcher:        role(0, 0, 0, v1alpha1.AttemptStatus{Terminating: ptr.To[int32](1)}),
	}
	completed := v1alpha1.TrainingJobStatus{
		Restarts: 1, RestartsCountTowardsMax: 1, TerminalState: "Completed",
		GroupConditions: []metav1.Condition{group("RestartingJobSet", metav1.ConditionFalse), group("Completed", metav1.ConditionTrue)},
		Workers:         role(1, 1, 2, v1alpha1.AttemptStatus{StartTime: &start, Terminating: ptr.To[int32](4)}),
		Launcher: role(1, 1, 0, v1alpha1.AttemptStatus{
			StartTime: &start, CompletionTime: &end, Succeeded: 1, CompletedIndexes: "0",
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: end},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: end},
			},
		}),
	}
	edit := func(base v1alpha1.TrainingJobStatus, f func(*v1alpha1.TrainingJobStatus)) func() v1alpha1.TrainingJobStatus {
		return func() v1alpha1.TrainingJobStatus {
			s := *base.DeepCopy()
			f(&s)
			return s
		}
	}
	same := func(s v1alpha1.TrainingJobStatus) func() v1alpha1.TrainingJobStatus {
		return edit(s, func(*v1alpha1.TrainingJobStatus) {})
	}
	tests := []struct {
		name      string
		before    *v1alpha1.TrainingJobStatus // written first, when not nil; must be accepted
		status    func() v1alpha1.TrainingJobStatus
		wantField string // empty: accepted
		wantMsg   string
	}{
		{name: "running", status: same(running)},
		{name: "restarting: the workers' attempt starts afresh", before: &running, status: same(restarting)},
		{name: "completed", before: &restarting, status: same(completed)},
		{name: "restarts decrease", before: &restarting, status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.Restarts, s.RestartsCountTowardsMax, s.Workers.Attempt = 0, 0, 0
		}), wantField: "status.restarts", wantMsg: "restarts may not decrease"},
		{name: "restartsCountTowardsMax decreases", before: &restarting, status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.RestartsCountTowardsMax = 0
		}), wantField: "status.restartsCountTowardsMax", wantMsg: "may not decrease"},
		{name: "restartsCountTowardsMax above restarts", status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.RestartsCountTowardsMax = 2
		}), wantField: "status.restartsCountTowardsMax", wantMsg: "may not exceed restarts"},
		{name: "restartsCountTowardsMax above spec.maxRestarts", status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.Restarts, s.RestartsCountTowardsMax = 3, 3
		}), wantField: "status.restartsCountTowardsMax", wantMsg: "may not exceed spec.maxRestarts"},
		{name: "terminal state changed", before: &completed, status: edit(completed, func(s *v1alpha1.TrainingJobStatus) {
			s.TerminalState = "Failed"
		}), wantField: "status.terminalState", wantMsg: "keeps its terminal state"},
		{name: "terminal state cleared", before: &completed, status: edit(completed, func(s *v1alpha1.TrainingJobStatus) {
			s.TerminalState = ""
		}), wantField: "status.terminalState", wantMsg: "keeps its terminal state"},
		{name: "unknown terminal state", status: edit(running, func(s *v1alpha1.TrainingJobStatus) { s.TerminalState = "Done" }),
			wantField: "status.terminalState", wantMsg: "Unsupported value"},
		{name: "unknown group condition type", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.GroupConditions = []metav1.Condition{group("Complete", metav1.ConditionTrue)}
		}), wantField: "status.groupConditions", wantMsg: "group condition types are"},
		{name: "group condition without a reason", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.GroupConditions = []metav1.Condition{group("Suspended", metav1.ConditionTrue)}
			s.GroupConditions[0].Reason = ""
		}), wantField: "status.groupConditions[0].reason", wantMsg: "at least 1 chars long"},
		{name: "group condition type twice", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.GroupConditions = []metav1.Condition{group("Suspended", metav1.ConditionTrue), group("Suspended", metav1.ConditionFalse)}
		}), wantField: "status.groupConditions[1]", wantMsg: "Duplicate value"},
		{name: "attempt decreases", before: &restarting, status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Attempt = 0
		}), wantField: "status.workers.attempt", wantMsg: "attempt may not decrease"},
		{name: "attempt above restarts", status: edit(running, func(s *v1alpha1.TrainingJobStatus) { s.Launcher.Attempt = 1 }),
			wantField: "status.launcher.attempt", wantMsg: "attempt may not exceed restarts"},
		{name: "a role's succeeded decreases", before: &running, status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Succeeded, s.Workers.Current.Succeeded, s.Workers.Current.CompletedIndexes = 0, 0, ""
		}), wantField: "status.workers.succeeded", wantMsg: "succeeded may not decrease"},
		{name: "a role's failed decreases across attempts", before: &restarting, status: edit(restarting, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Failed = 1
		}), wantField: "status.workers.failed", wantMsg: "failed may not decrease"},
		{name: "a role's total below its attempt's", status: edit(running, func(s *v1alpha1.TrainingJobStatus) { s.Workers.Failed = 0 }),
			wantField: "status.workers.failed", wantMsg: "counts every attempt"},
		{name: "succeeded decreases within an attempt", before: &running, status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Current.Succeeded = 0
		}), wantField: "status.workers.current.succeeded", wantMsg: "may not decrease within an attempt"},
		{name: "two launcher successes", status: edit(completed, func(s *v1alpha1.TrainingJobStatus) {
			s.Launcher.Succeeded, s.Launcher.Current.Succeeded = 2, 2
		}), wantField: "status.launcher.current.succeeded", wantMsg: "one launcher pod succeeds at most"},
		{name: "more workers succeeded than spec.workers", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Succeeded, s.Workers.Current.Succeeded = 5, 5
		}), wantField: "status.workers.current.succeeded", wantMsg: "may not exceed spec.workers"},
		{name: "a role's completionTime without Complete", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Current.CompletionTime = &end
		}), wantField: "status.workers.current.completionTime", wantMsg: "only on a role with the condition Complete"},
		{name: "a role both Complete and Failed", status: edit(completed, func(s *v1alpha1.TrainingJobStatus) {
			s.Launcher.Current.Conditions = append(s.Launcher.Current.Conditions, batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue})
		}), wantField: "status.launcher.current.conditions", wantMsg: "both Complete and Failed"},
		{name: "a role's ready above active", status: edit(running, func(s *v1alpha1.TrainingJobStatus) { s.Launcher.Current.Ready = ptr.To[int32](2) }),
			wantField: "status.launcher.current.ready", wantMsg: "may not exceed active"},
		{name: "a role's unknown condition type", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Current.Conditions = []batchv1.JobCondition{{Type: "Completed", Status: corev1.ConditionTrue}}
		}), wantField: "status.workers.current.conditions", wantMsg: "condition types are"},
		{name: "a role's malformed failedIndexes", status: edit(running, func(s *v1alpha1.TrainingJobStatus) { s.Workers.Current.FailedIndexes = ptr.To("1,") }),
			wantField: "status.workers.current.failedIndexes", wantMsg: "should match"},
		{name: "a role's uncounted UID twice", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Current.UncountedTerminatedPods.Succeeded = []types.UID{"a", "a"}
		}), wantField: "status.workers.current.uncountedTerminatedPods.succeeded[1]", wantMsg: "Duplicate value"},
		{name: "a role's negative active", status: edit(running, func(s *v1alpha1.TrainingJobStatus) {
			s.Workers.Current.Active, s.Workers.Current.Ready = -1, nil
		}), wantField: "status.workers.current.active", wantMsg: "greater than or equal to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := validLauncher(testName(t))
			create(t, tj)
			if tt.before != nil {
				tj.Status = *tt.before.DeepCopy()
				if err := k8s.Status().Update(context.Background(), tj); err != nil {
					t.Fatalf("writing the status before: %v", err)
				}
			}
			tj.Status = tt.status()
			err := k8s.Status().Update(context.Background(), tj)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("status refused: %v", err)
				}
				var got v1alpha1.TrainingJob
				if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tj), &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.status(), got.Status); diff != "" {
					t.Errorf("stored status (-written +stored):\n%s", diff)
				}
				return
			}
			envtesting.RequireInvalid(t, err, tt.wantField, tt.wantMsg)
		})
	}
}

// The status of a run with a launcher is refused on a run without one.
func TestLauncherStatusNeedsLauncher(t *testing.T) {
	tests := []struct {
		name   string
		status v1alpha1.TrainingJobStatus
	}{
		{"restarts", v1alpha1.TrainingJobStatus{Restarts: 1}},
		{"terminal state", v1alpha1.TrainingJobStatus{TerminalState: "Failed"}},
		{"a role", v1alpha1.TrainingJobStatus{Workers: &v1alpha1.RoleStatus{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
			create(t, tj)
			tj.Status = tt.status
			envtesting.RequireInvalid(t, k8s.Status().Update(context.Background(), tj), "status", "a run without spec.launcher has no launcher")
		})
	}
}
