package config_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
)

// The child Job template changes the API server lets through are JobSet's
// (its webhook's ValidateUpdate), and controller.ValidateUpdate agrees: an
// Indexed role's parallelism = completions on a running group (elastic), not
// once it has finished nor for a NonIndexed role nor unequal; the pod
// template's labels, annotations, nodeSelector, tolerations and
// schedulingGates on a suspended group (or one being suspended), and nothing
// else of the template, suspended or not.
func TestTemplateUpdates(t *testing.T) {
	resize := func(n int32) func(*v1alpha2.JobSet) {
		return func(js *v1alpha2.JobSet) {
			s := &js.Spec.ReplicatedJobs[1].Template.Spec
			s.Parallelism, s.Completions = ptr.To(n), ptr.To(n)
		}
	}
	relabel := func(js *v1alpha2.JobSet) {
		pod := &js.Spec.ReplicatedJobs[1].Template.Spec.Template
		pod.Labels = map[string]string{"queue": "b"}
		pod.Annotations = map[string]string{"note": "x"}
		pod.Spec.NodeSelector = map[string]string{"pool": "b"}
		pod.Spec.Tolerations = []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}}
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	}
	const templateSpec = "spec.replicatedJobs[1].template.spec"
	tests := []struct {
		name      string
		suspended bool                   // the group is created suspended
		finished  bool                   // the group's status says Completed
		setup     func(*v1alpha2.JobSet) // before the creation
		modify    func(*v1alpha2.JobSet)
		field     string // "" when the update is accepted
		msg       string
	}{
		{name: "elastic: an Indexed role grows", modify: resize(3)},
		{name: "elastic: an Indexed role shrinks", setup: resize(3), modify: resize(1)},
		{name: "elastic: an explicitly Indexed role", setup: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}, modify: resize(2)},
		{name: "elastic: completions unequal to parallelism", modify: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To[int32](2)
		}, field: templateSpec + ".completions", msg: "completions must be equal to parallelism for Elastic Indexed Jobs"},
		{name: "elastic: down to zero", modify: resize(0), field: templateSpec + ".parallelism", msg: "parallelism must be >= 1"},
		{name: "elastic: a NonIndexed role", setup: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
		}, modify: resize(2), field: templateSpec, msg: "parallelism and completions may change only for an Indexed Job"},
		{name: "elastic: a finished group", finished: true, modify: resize(2), field: "spec.replicatedJobs",
			msg: "Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)"},
		{name: "another Job field", modify: func(js *v1alpha2.JobSet) { js.Spec.ReplicatedJobs[1].Template.Spec.BackoffLimit = ptr.To[int32](4) },
			field: templateSpec, msg: "field is immutable: only parallelism and completions may change"},
		{name: "the Job template's labels", modify: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Labels = map[string]string{"a": "b"}
		}, field: "spec.replicatedJobs[1].template.metadata", msg: "field is immutable"},
		{name: "the pod template's scheduling fields, suspended", suspended: true, modify: relabel},
		{name: "the pod template's scheduling fields, suspending", modify: func(js *v1alpha2.JobSet) {
			js.Spec.Suspend = ptr.To(true)
			relabel(js)
		}},
		{name: "the pod template's scheduling fields, running", modify: relabel, field: "spec.replicatedJobs",
			msg: "may change only while the JobSet is suspended"},
		{name: "suspended: a container image", suspended: true, modify: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.Template.Spec.Containers[0].Image = "registry.example/x:2"
		}, field: templateSpec + ".template.spec", msg: "field is immutable: only labels, annotations, nodeSelector, tolerations and schedulingGates"},
		{name: "suspended: the pod template's name", suspended: true, modify: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.Template.Name = "pod"
		}, field: templateSpec + ".template.metadata", msg: "field is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			js := valid(testName(t))
			if tt.suspended {
				js.Spec.Suspend = ptr.To(true)
			}
			if tt.setup != nil {
				tt.setup(js)
			}
			if err := k8s.Create(ctx, js); err != nil {
				t.Fatal(err)
			}
			if tt.finished {
				js.Status.TerminalState = v1alpha2.Completed
				js.Status.Conditions = []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
					Message: "jobset completed successfully", LastTransitionTime: metav1.Now()}}
				if err := k8s.Status().Update(ctx, js); err != nil {
					t.Fatal(err)
				}
			}
			old := js.DeepCopy()
			tt.modify(js)
			errs := controller.ValidateUpdate(old, js)
			if tt.field == "" {
				if len(errs) > 0 {
					t.Errorf("controller.ValidateUpdate() = %v, want none", errs)
				}
				if err := k8s.Update(ctx, js); err != nil {
					t.Errorf("the API server refused the update: %v", err)
				}
				return
			}
			if !refusedAt(errs, tt.field) {
				t.Errorf("controller.ValidateUpdate() = %v, want an error at %s", errs, tt.field)
			}
			envtesting.RequireInvalidWithin(t, k8s.Update(ctx, js), tt.field, tt.msg)
		})
	}
}
