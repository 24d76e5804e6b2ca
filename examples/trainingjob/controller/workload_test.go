package controller_test

import (
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
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
	"github.com/jobkit/jobkit/plan"
)

// validTJ returns a TrainingJob that Workload accepts; edit changes it first.
func validTJ(edit func(*v1alpha1.TrainingJob)) *v1alpha1.TrainingJob {
	tj := &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "resnet", UID: "uid-1", ResourceVersion: "7"},
		Spec: v1alpha1.TrainingJobSpec{
			Workers: 8,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "trainer", Image: "trainer:1"}},
			}},
		},
		Status: v1alpha1.TrainingJobStatus{Succeeded: 2, CompletedIndexes: "0,3"},
	}
	if edit != nil {
		edit(tj)
	}
	return tj
}

func TestWorkload(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	tests := []struct {
		name         string
		tj           *v1alpha1.TrainingJob
		wantSpec     func(tj *v1alpha1.TrainingJob) plan.Spec
		wantBackoff  plainbackoff.Policy
		wantDeleting bool
	}{
		{
			name: "defaults: parallelism workers, no retries, managedBy unset",
			tj:   validTJ(nil),
			wantSpec: func(tj *v1alpha1.TrainingJob) plan.Spec {
				return plan.Spec{
					Completions: ptr.To[int32](8), Parallelism: ptr.To[int32](8),
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					BackoffLimitPerIndex: ptr.To[int32](0),
					PodReplacementPolicy: ptr.To(batchv1.Failed),
					Template:             &tj.Spec.Template,
				}
			},
			wantBackoff: plainbackoff.Policy{Base: 10 * time.Second, Max: 6 * time.Minute},
		},
		{
			name: "every field",
			tj: validTJ(func(tj *v1alpha1.TrainingJob) {
				tj.DeletionTimestamp = &start
				s := &tj.Spec
				s.Parallelism = ptr.To[int32](4)
				s.BackoffLimitPerIndex = ptr.To[int32](3)
				s.MaxFailedIndexes = ptr.To[int32](2)
				s.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{Duration: 30 * time.Second}, Max: &metav1.Duration{Duration: 5 * time.Minute}}
				s.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
					Action:      batchv1.PodFailurePolicyActionFailJob,
					OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{43, 42}},
				}}}
				s.SuccessPolicy = &v1alpha1.SuccessPolicy{SucceededCount: 6}
				s.Suspend = ptr.To(true)
				s.ActiveDeadlineSeconds = ptr.To[int64](3600)
				s.ManagedBy = ptr.To("example.com/trainer")
			}),
			wantSpec: func(tj *v1alpha1.TrainingJob) plan.Spec {
				return plan.Spec{
					Completions: ptr.To[int32](8), Parallelism: ptr.To[int32](4),
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					BackoffLimitPerIndex: ptr.To[int32](3),
					MaxFailedIndexes:     ptr.To[int32](2),
					PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
						Action:      batchv1.PodFailurePolicyActionFailJob,
						OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42, 43}},
					}}},
					SuccessPolicy:         &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](6)}}},
					PodReplacementPolicy:  ptr.To(batchv1.Failed),
					Suspend:               ptr.To(true),
					ActiveDeadlineSeconds: ptr.To[int64](3600),
					Template:              &tj.Spec.Template,
					ManagedBy:             ptr.To("example.com/trainer"),
				}
			},
			wantBackoff:  plainbackoff.Policy{Base: 30 * time.Second, Max: 5 * time.Minute},
			wantDeleting: true,
		},
		{
			name: "backoff with only its initial delay keeps the default cap",
			tj: validTJ(func(tj *v1alpha1.TrainingJob) {
				tj.Spec.Parallelism = ptr.To[int32](0)
				tj.Spec.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{Duration: time.Second}}
			}),
			wantSpec: func(tj *v1alpha1.TrainingJob) plan.Spec {
				return plan.Spec{
					Completions: ptr.To[int32](8), Parallelism: ptr.To[int32](0),
					CompletionMode:       ptr.To(batchv1.IndexedCompletion),
					BackoffLimitPerIndex: ptr.To[int32](0),
					PodReplacementPolicy: ptr.To(batchv1.Failed),
					Template:             &tj.Spec.Template,
				}
			},
			wantBackoff: plainbackoff.Policy{Base: time.Second, Max: 6 * time.Minute},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.tj.DeepCopy()
			w, err := controller.Workload(tt.tj)
			if err != nil {
				t.Fatalf("Workload() error = %v", err)
			}
			if diff := cmp.Diff(tt.wantSpec(tt.tj), w.Spec); diff != "" {
				t.Errorf("Workload().Spec (-want +got):\n%s", diff)
			}
			if w.Spec.Template != &tt.tj.Spec.Template {
				t.Error("Workload().Spec.Template does not point into the TrainingJob")
			}
			if w.Spec.Selector != nil {
				t.Errorf("Workload().Spec.Selector = %v, want nil (only owned pods count)", w.Spec.Selector)
			}
			if w.Backoff != tt.wantBackoff {
				t.Errorf("Workload().Backoff = %v, want %v", w.Backoff, tt.wantBackoff)
			}
			if w.Namespace != "ml" || w.Name != "resnet" || w.UID != "uid-1" || w.ResourceVersion != "7" || w.Deleting != tt.wantDeleting {
				t.Errorf("Workload() identity = %s/%s %s rv %s deleting %v", w.Namespace, w.Name, w.UID, w.ResourceVersion, w.Deleting)
			}
			if w.Object != tt.tj {
				t.Error("Workload().Object is not the TrainingJob")
			}
			if diff := cmp.Diff(tt.tj.Status.JobStatus(), w.Status); diff != "" {
				t.Errorf("Workload().Status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.tj); diff != "" {
				t.Errorf("Workload modified its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWorkloadRefuses(t *testing.T) {
	tests := []struct {
		name       string
		tj         *v1alpha1.TrainingJob
		wantFields []string
	}{
		{name: "nil", wantFields: []string{"nil"}},
		{name: "restartPolicy OnFailure", tj: validTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}), wantFields: []string{`spec.template.spec.restartPolicy: "OnFailure"`}},
		{name: "an empty template", tj: validTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Template = corev1.PodTemplateSpec{}
		}), wantFields: []string{`spec.template.spec.restartPolicy: ""`, "spec.template.spec.containers: []"}},
		{name: "no worker", tj: validTJ(func(tj *v1alpha1.TrainingJob) { tj.Spec.Workers = 0 }), wantFields: []string{"spec.workers: 0"}},
		{name: "a launcher (RolesWorkload converts it)", tj: launcherTJ(nil), wantFields: []string{"spec.launcher: set"}},
		{name: "zero backoff", tj: validTJ(func(tj *v1alpha1.TrainingJob) {
			tj.Spec.Backoff = &v1alpha1.RetryBackoff{Initial: &metav1.Duration{}, Max: &metav1.Duration{Duration: -time.Second}}
		}), wantFields: []string{"spec.backoff.initial: 0s", "spec.backoff.max: -1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := controller.Workload(tt.tj)
			if w != nil || !errors.Is(err, controller.ErrInvalid) {
				t.Fatalf("Workload() = %v, %v; want nil and an error wrapping ErrInvalid", w, err)
			}
			for _, f := range tt.wantFields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("Workload() error %q does not name %s", err, f)
				}
			}
		})
	}
}

func TestFinished(t *testing.T) {
	tests := []struct {
		name       string
		conditions []batchv1.JobCondition
		want       bool
	}{
		{name: "running"},
		{name: "failure target only", conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}}},
		{name: "complete", conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, want: true},
		{name: "failed", conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}, want: true},
		{name: "complete false", conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionFalse}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tj := validTJ(func(tj *v1alpha1.TrainingJob) { tj.Status.Conditions = tt.conditions })
			if got := controller.Finished(tj); got != tt.want {
				t.Errorf("Finished() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKindIsValid(t *testing.T) {
	if err := controller.Kind.Validate(); err != nil {
		t.Fatalf("Kind.Validate() = %v", err)
	}
}

// Type's accessors read and write the TrainingJob's own fields: the status the
// Reconciler computes comes back through Workload unchanged.
func TestType(t *testing.T) {
	tests := []struct {
		name      string
		managedBy *string
		status    batchv1.JobStatus
	}{
		{name: "unset managedBy, empty status"},
		{name: "managedBy and a finished status", managedBy: ptr.To("example.com/trainer"), status: batchv1.JobStatus{
			Succeeded: 3, Failed: 1, CompletedIndexes: "0-2", FailedIndexes: ptr.To(""),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			Conditions:              []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tj := validTJ(func(tj *v1alpha1.TrainingJob) { tj.Spec.ManagedBy = tt.managedBy })
			if diff := cmp.Diff(tt.managedBy, controller.Type.ManagedBy(tj)); diff != "" {
				t.Errorf("Type.ManagedBy (-want +got):\n%s", diff)
			}
			controller.Type.SetStatus(tj, tt.status)
			w, err := controller.Type.Workload(tj)
			if err != nil {
				t.Fatal(err)
			}
			if w.Status.Succeeded != tt.status.Succeeded || w.Status.Failed != tt.status.Failed ||
				w.Status.CompletedIndexes != tt.status.CompletedIndexes || len(w.Status.Conditions) != len(tt.status.Conditions) {
				t.Errorf("status after SetStatus and Workload = %+v, want %+v", w.Status, tt.status)
			}
		})
	}
	if got := controller.Type.New(); got == nil || got.Name != "" {
		t.Errorf("Type.New() = %+v, want an empty TrainingJob", got)
	}
}
