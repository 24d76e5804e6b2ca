package plan_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/owner"
	"github.com/jobkit/jobkit/plan"
)

func TestWorkloadHandledBy(t *testing.T) {
	custom := owner.Kind{Group: "ml.example.com", Version: "v1", Kind: "TrainingJob", Finalizer: "ml.example.com/tracking"}
	tests := []struct {
		name       string
		managedBy  *string
		controller string
		kind       owner.Kind
		want       bool
		wantName   string
	}{
		{name: "unset Job, built-in controller", controller: batchv1.JobControllerName, kind: owner.BatchJob, want: true, wantName: batchv1.JobControllerName},
		{name: "unset Job, another controller", controller: "example.com/mine", kind: owner.BatchJob, want: false, wantName: batchv1.JobControllerName},
		{name: "unset custom owner, any controller", controller: "example.com/mine", kind: custom, want: true, wantName: batchv1.JobControllerName},
		{name: "set to this controller", managedBy: ptr.To("example.com/mine"), controller: "example.com/mine", kind: owner.BatchJob, want: true, wantName: "example.com/mine"},
		{name: "set to another controller", managedBy: ptr.To("example.com/other"), controller: "example.com/mine", kind: custom, want: false, wantName: "example.com/other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &plan.Workload{Spec: plan.Spec{ManagedBy: tc.managedBy}}
			if got := w.HandledBy(tc.controller, tc.kind); got != tc.want {
				t.Errorf("HandledBy(%q, %s) = %v, want %v", tc.controller, tc.kind.Kind, got, tc.want)
			}
			if got := w.Controller(); got != tc.wantName {
				t.Errorf("Controller() = %q, want %q", got, tc.wantName)
			}
		})
	}
}

func TestSpecEffectivePodReplacementPolicy(t *testing.T) {
	tests := []struct {
		name string
		spec plan.Spec
		want batchv1.PodReplacementPolicy
	}{
		{name: "default", want: batchv1.TerminatingOrFailed},
		{name: "default with a pod failure policy", spec: plan.Spec{PodFailurePolicy: &batchv1.PodFailurePolicy{}}, want: batchv1.Failed},
		{name: "set wins", spec: plan.Spec{PodReplacementPolicy: ptr.To(batchv1.Failed)}, want: batchv1.Failed},
		{name: "set wins over the pod failure policy default", spec: plan.Spec{PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed), PodFailurePolicy: &batchv1.PodFailurePolicy{}}, want: batchv1.TerminatingOrFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.spec.EffectivePodReplacementPolicy(); got != tc.want {
				t.Errorf("EffectivePodReplacementPolicy() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSpecWantActive(t *testing.T) {
	tests := []struct {
		name              string
		spec              plan.Spec
		succeeded, active int32
		want              int32
	}{
		{name: "undefaulted: one completion, parallelism 1", want: 1},
		{name: "undefaulted, done", succeeded: 1, want: 0},
		{name: "completions left below parallelism", spec: plan.Spec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](10)}, succeeded: 2, want: 3},
		{name: "parallelism caps", spec: plan.Spec{Completions: ptr.To[int32](100), Parallelism: ptr.To[int32](4)}, succeeded: 2, want: 4},
		{name: "nil parallelism means 1", spec: plan.Spec{Completions: ptr.To[int32](5)}, want: 1},
		{name: "work queue before a success", spec: plan.Spec{Parallelism: ptr.To[int32](3)}, active: 1, want: 3},
		{name: "work queue after a success keeps the running pods", spec: plan.Spec{Parallelism: ptr.To[int32](3)}, succeeded: 1, active: 2, want: 2},
		{name: "suspended", spec: plan.Spec{Completions: ptr.To[int32](5), Parallelism: ptr.To[int32](5), Suspend: ptr.To(true)}, active: 5, want: 0},
		{name: "more succeeded than completions", spec: plan.Spec{Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](4)}, succeeded: 5, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.spec.WantActive(tc.succeeded, tc.active); got != tc.want {
				t.Errorf("WantActive(%d, %d) = %d, want %d", tc.succeeded, tc.active, got, tc.want)
			}
		})
	}
}
