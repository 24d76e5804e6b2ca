package controller_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// Type answers each shape with its one conversion: a run without a launcher is no
// roles owner (Workload converts it), one with a launcher is, and its status
// goes through StatusFromRoles (refusing a role it cannot hold).
func TestTypeShapes(t *testing.T) {
	plain := launcherTJ(func(tj *v1alpha1.TrainingJob) { tj.Spec.Launcher, tj.Spec.MaxRestarts = nil, nil })
	if g, err := controller.Type.Roles(plain); g != nil || err != nil {
		t.Errorf("Type.Roles of a run without a launcher = %v, %v, want nil, nil", g, err)
	}
	if _, err := controller.Type.Workload(plain); err != nil {
		t.Errorf("Type.Workload of a run without a launcher: %v", err)
	}
	tj := launcherTJ(nil)
	g, err := controller.Type.Roles(tj)
	if err != nil || g == nil || len(g.Roles) != 2 {
		t.Fatalf("Type.Roles of a run with a launcher = %+v, %v, want two roles", g, err)
	}
	if _, err := controller.Type.Workload(tj); err == nil {
		t.Error("Type.Workload of a run with a launcher succeeded, want it refused")
	}
	st := ownedpods.Status{Restarts: 1, Roles: []ownedpods.RoleStatus{{Name: controller.RoleWorkers, Attempt: 1, Failed: 2}}}
	if err := controller.Type.SetRolesStatus(tj, st); err != nil || tj.Status.Restarts != 1 || tj.Status.Workers == nil || tj.Status.Workers.Failed != 2 {
		t.Errorf("SetRolesStatus: %v, status %+v", err, tj.Status)
	}
	for _, suspend := range []bool{true, false} {
		controller.Type.SetSuspend(tj, suspend)
		if g, _ := controller.Type.Roles(tj); g.Suspend != suspend {
			t.Errorf("after SetSuspend(%v) the roles owner reads suspend %v", suspend, g.Suspend)
		}
	}
	before := tj.Status
	if err := controller.Type.SetRolesStatus(tj, ownedpods.Status{Roles: []ownedpods.RoleStatus{{Name: "head"}}}); err == nil || tj.Status.Restarts != before.Restarts {
		t.Errorf("SetRolesStatus of role head = %v (status %+v), want an error and the status kept", err, tj.Status)
	}
}

// A run with a launcher is finished by its group conditions, not by the Job-shaped
// ones (TestFinished has those).
func TestFinishedWithLauncher(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: s}}
	}
	tests := []struct {
		name   string
		status v1alpha1.TrainingJobStatus
		want   bool
	}{
		{name: "Job-shaped Complete on a launcher run: not its condition", status: v1alpha1.TrainingJobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: "True"}}}},
		{name: "launcher, running", status: v1alpha1.TrainingJobStatus{GroupConditions: cond(plaingroup.ConditionRestarting, metav1.ConditionTrue)}},
		{name: "launcher, Completed", status: v1alpha1.TrainingJobStatus{GroupConditions: cond(plaingroup.ConditionCompleted, metav1.ConditionTrue)}, want: true},
		{name: "launcher, Failed", status: v1alpha1.TrainingJobStatus{GroupConditions: cond(plaingroup.ConditionFailed, metav1.ConditionTrue)}, want: true},
		{name: "launcher, Completed False", status: v1alpha1.TrainingJobStatus{GroupConditions: cond(plaingroup.ConditionCompleted, metav1.ConditionFalse)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tj := launcherTJ(nil)
			tj.Status = tt.status
			if got := controller.Finished(tj); got != tt.want {
				t.Errorf("Finished = %v, want %v", got, tt.want)
			}
		})
	}
}
