package controller_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/groups/ownedpods"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// launcherTJ returns a TrainingJob with a launcher that RolesWorkload accepts;
// edit changes it first.
func launcherTJ(edit func(*v1alpha1.TrainingJob)) *v1alpha1.TrainingJob {
	return validTJ(func(tj *v1alpha1.TrainingJob) {
		tj.Generation = 3
		tj.Status = v1alpha1.TrainingJobStatus{Restarts: 1, Workers: &v1alpha1.RoleStatus{Attempt: 1, Succeeded: 2}}
		tj.Spec.Launcher = &v1alpha1.Launcher{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "launcher", Image: "mpirun:1"}},
		}}}
		if edit != nil {
			edit(tj)
		}
	})
}

func TestRolesWorkload(t *testing.T) {
	deleted := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	failRun := plaingroup.Rule{Name: controller.FailRunRule, Action: plaingroup.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy", "DeadlineExceeded"}}
	tests := []struct {
		name string
		tj   *v1alpha1.TrainingJob
		// wantLauncher is the launcher's spec; the workers' is Workload's of the
		// same run without a launcher.
		wantLauncher func(tj *v1alpha1.TrainingJob) plan.Spec
		// wantMaxFailedIndexes is the workers' (the one difference from Workload).
		wantMaxFailedIndexes int32
		wantMaxRestarts      int32
		wantBackoff          plainbackoff.Policy
		wantSuspend          bool
	}{
		{
			name: "defaults: one launcher pod, no retry, no restart",
			tj:   launcherTJ(nil),
			wantLauncher: func(tj *v1alpha1.TrainingJob) plan.Spec {
				return plan.Spec{
					Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1),
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					BackoffLimitPerIndex: ptr.To[int32](0),
					PodReplacementPolicy: ptr.To(batchv1.Failed),
					Template:             &tj.Spec.Launcher.Template,
				}
			},
			wantBackoff: plainbackoff.Policy{Base: 10 * time.Second, Max: 6 * time.Minute},
		},
		{
			name: "every field",
			tj: launcherTJ(func(tj *v1alpha1.TrainingJob) {
				tj.DeletionTimestamp = &deleted
				s := &tj.Spec
				s.Launcher.BackoffLimit = ptr.To[int32](2)
				s.MaxRestarts = ptr.To[int32](3)
				s.Parallelism = ptr.To[int32](4)
				s.BackoffLimitPerIndex = ptr.To[int32](1)
				s.MaxFailedIndexes = ptr.To[int32](2)
				s.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{Duration: time.Second}}
				s.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
					Action:      batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{43, 42}},
				}}}
				s.SuccessPolicy = &v1alpha1.SuccessPolicy{SucceededCount: 6}
				s.Suspend = ptr.To(true)
				s.ActiveDeadlineSeconds = ptr.To[int64](600)
				s.ManagedBy = ptr.To("example.com/trainer")
			}),
			wantLauncher: func(tj *v1alpha1.TrainingJob) plan.Spec {
				return plan.Spec{
					Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1),
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					BackoffLimitPerIndex: ptr.To[int32](2),
					PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
						Action:      batchv1.PodFailurePolicyActionFailJob,
						OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42, 43}},
					}}},
					PodReplacementPolicy:  ptr.To(batchv1.Failed),
					Suspend:               ptr.To(true),
					ActiveDeadlineSeconds: ptr.To[int64](600),
					Template:              &tj.Spec.Launcher.Template,
					ManagedBy:             ptr.To("example.com/trainer"),
				}
			},
			wantMaxFailedIndexes: 2,
			wantMaxRestarts:      3,
			wantBackoff:          plainbackoff.Policy{Base: time.Second, Max: 6 * time.Minute},
			wantSuspend:          true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.tj.DeepCopy()
			got, err := controller.RolesWorkload(tt.tj)
			if err != nil {
				t.Fatalf("RolesWorkload() error = %v", err)
			}
			workers := tt.tj.DeepCopy()
			workers.Spec.Launcher, workers.Spec.MaxRestarts = nil, nil
			alone, err := controller.Workload(workers)
			if err != nil {
				t.Fatalf("Workload() of the workers alone: %v", err)
			}
			alone.Spec.Template = &tt.tj.Spec.Template
			alone.Spec.MaxFailedIndexes = ptr.To(tt.wantMaxFailedIndexes)
			want := &ownedpods.Workload{
				Namespace: "ml", Name: "resnet", UID: "uid-1", Generation: 3, ResourceVersion: "7",
				Deleting: tt.tj.DeletionTimestamp != nil, Object: tt.tj,
				ManagedBy: tt.tj.Spec.ManagedBy, Suspend: tt.wantSuspend,
				Roles: []ownedpods.Role{
					{Name: "workers", Spec: alone.Spec, Backoff: tt.wantBackoff},
					{Name: "launcher", Spec: tt.wantLauncher(tt.tj), Backoff: tt.wantBackoff,
						DependsOn: []plaingroup.Dependency{{Name: "workers", Status: plaingroup.DependsOnReady}}},
				},
				FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: tt.wantMaxRestarts, RestartStrategy: plaingroup.BlockingRecreate, Rules: []plaingroup.Rule{failRun}},
				SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"launcher"}},
				StartupOrder:  plaingroup.AnyOrder,
				Status: ownedpods.Status{Restarts: 1, Roles: []ownedpods.RoleStatus{{
					Name: "workers", Attempt: 1, Succeeded: 2, Job: batchv1.JobStatus{},
				}}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RolesWorkload() (-want +got):\n%s", diff)
			}
			if got.Object != tt.tj || got.Roles[0].Spec.Template != &tt.tj.Spec.Template || got.Roles[1].Spec.Template != &tt.tj.Spec.Launcher.Template {
				t.Error("RolesWorkload() does not point into the TrainingJob (object, templates)")
			}
			if errs := plaingroup.Validate(&plaingroup.Spec{Name: got.Name, Roles: groupRoles(got), FailurePolicy: got.FailurePolicy, SuccessPolicy: got.SuccessPolicy}); errs != nil {
				t.Errorf("the group rules are not valid: %v", errs)
			}
			if diff := cmp.Diff(before, tt.tj); diff != "" {
				t.Errorf("RolesWorkload modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

// groupRoles returns the roles of w as plain/group sees them, for Validate.
func groupRoles(w *ownedpods.Workload) []plaingroup.Role {
	out := make([]plaingroup.Role, len(w.Roles))
	for i, r := range w.Roles {
		out[i] = plaingroup.Role{Name: r.Name, Replicas: 1, Parallelism: *r.Spec.Parallelism, Completions: r.Spec.Completions, DependsOn: r.DependsOn}
	}
	return out
}

func TestRolesWorkloadRefuses(t *testing.T) {
	tests := []struct {
		name       string
		tj         *v1alpha1.TrainingJob
		wantFields []string
	}{
		{name: "nil", wantFields: []string{"nil"}},
		{name: "no launcher", tj: validTJ(nil), wantFields: []string{"spec.launcher: unset"}},
		{name: "launcher restartPolicy OnFailure", tj: launcherTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Launcher.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}), wantFields: []string{`spec.launcher.template.spec.restartPolicy: "OnFailure"`}},
		{name: "empty launcher and worker templates", tj: launcherTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Launcher.Template, tj.Spec.Template = corev1.PodTemplateSpec{}, corev1.PodTemplateSpec{}
		}), wantFields: []string{
			`spec.launcher.template.spec.restartPolicy: ""`, "spec.launcher.template.spec.containers: []",
			`spec.template.spec.restartPolicy: ""`, "spec.template.spec.containers: []",
		}},
		{name: "zero backoff", tj: launcherTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{}}
		}), wantFields: []string{"spec.backoff.initial: 0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := controller.RolesWorkload(tt.tj)
			if w != nil || !errors.Is(err, controller.ErrInvalid) {
				t.Fatalf("RolesWorkload() = %v, %v; want nil and an error wrapping ErrInvalid", w, err)
			}
			for _, f := range tt.wantFields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("RolesWorkload() error %q does not name %s", err, f)
				}
			}
		})
	}
}

func TestStatusFromRolesRefuses(t *testing.T) {
	role := func(name string) ownedpods.RoleStatus { return ownedpods.RoleStatus{Name: name} }
	tests := []struct {
		name      string
		roles     []ownedpods.RoleStatus
		wantField string
		inPlace   plaingroup.InPlaceAttempts
	}{
		{"unknown role", []ownedpods.RoleStatus{role("workers"), role("head")}, `roles[1].name: "head"`, plaingroup.InPlaceAttempts{}},
		{"launcher first", []ownedpods.RoleStatus{role("launcher"), role("workers")}, `roles[1].name: "workers": the workers come before the launcher`, plaingroup.InPlaceAttempts{}},
		{"workers twice", []ownedpods.RoleStatus{role("workers"), role("workers")}, `roles[1].name: "workers": listed twice`, plaingroup.InPlaceAttempts{}},
		{"launcher twice", []ownedpods.RoleStatus{role("workers"), role("launcher"), role("launcher")}, `roles[2].name: "launcher": listed twice`, plaingroup.InPlaceAttempts{}},
		{"in-place attempts", []ownedpods.RoleStatus{role("workers")}, `inPlace: `, plaingroup.InPlaceAttempts{Current: ptr.To[int32](0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := controller.StatusFromRoles(ownedpods.Status{Restarts: 1, Roles: tt.roles, InPlace: tt.inPlace})
			if !errors.Is(err, controller.ErrInvalid) || !strings.Contains(err.Error(), tt.wantField) {
				t.Fatalf("StatusFromRoles() error = %v, want ErrInvalid naming %s", err, tt.wantField)
			}
			if diff := cmp.Diff(v1alpha1.TrainingJobStatus{}, got); diff != "" {
				t.Errorf("StatusFromRoles() returned a status with its error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRolesStatusRoundTrip converts every sample of checkRolesStatusRoundTrip to
// a TrainingJobStatus and back, in Go and through the JSON the API server
// stores: nothing of ownedpods.Status is lost, and nothing is shared.
func TestRolesStatusRoundTrip(t *testing.T) {
	fail := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	inGo := func(rs ownedpods.Status) ownedpods.Status {
		st, err := controller.StatusFromRoles(rs)
		fail(err)
		return controller.RolesStatus(&st)
	}
	throughJSON := func(rs ownedpods.Status) ownedpods.Status {
		st, err := controller.StatusFromRoles(rs)
		fail(err)
		data, err := json.Marshal(st)
		fail(err)
		var back v1alpha1.TrainingJobStatus
		fail(json.Unmarshal(data, &back))
		return controller.RolesStatus(&back)
	}
	if err := checkRolesStatusRoundTrip(inGo); err != nil {
		t.Errorf("in Go: %v", err)
	}
	if err := checkRolesStatusRoundTrip(throughJSON); err != nil {
		t.Errorf("through JSON: %v", err)
	}

	// Neither conversion shares memory with its input.
	rs := rolesStatusSamples()[2].st
	st, err := controller.StatusFromRoles(rs)
	fail(err)
	rs.Conditions[0].Reason, *rs.Roles[0].Job.Ready = "Changed", 99
	back := controller.RolesStatus(&st)
	if st.GroupConditions[0].Reason == "Changed" || *st.Workers.Current.Ready == 99 {
		t.Error("StatusFromRoles shares memory with its input")
	}
	back.Conditions[0].Reason, back.Roles[0].Job.UncountedTerminatedPods.Failed[0] = "Again", "changed"
	if st.GroupConditions[0].Reason == "Again" || st.Workers.Current.UncountedTerminatedPods.Failed[0] == "changed" {
		t.Error("RolesStatus shares memory with its input")
	}
}

// The Job-shaped fields of a status are those of a run without a launcher:
// RolesStatus does not read them and StatusFromRoles leaves them unset.
func TestRolesStatusIgnoresJobFields(t *testing.T) {
	st := v1alpha1.StatusFromJob(batchv1.JobStatus{Active: 2, Succeeded: 1, CompletedIndexes: "0"})
	st.Restarts = 1
	got := controller.RolesStatus(&st)
	if diff := cmp.Diff(ownedpods.Status{Restarts: 1}, got); diff != "" {
		t.Errorf("RolesStatus() (-want +got):\n%s", diff)
	}
	back, err := controller.StatusFromRoles(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(v1alpha1.TrainingJobStatus{Restarts: 1}, back); diff != "" {
		t.Errorf("StatusFromRoles() (-want +got):\n%s", diff)
	}
}
