package config_test

// These tests install the TrainingJob CRD on a real kube-apiserver (envtest)
// and check what the API server itself accepts and refuses: the sample, specs
// that break the schema, spec updates, and status writes that break the Job
// status rules the CRD carries. No controller runs.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/jobkit/jobkit/examples/internal/envtesting"
	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
)

var (
	k8s       client.Client
	namespace string
)

func TestMain(m *testing.M) {
	opts := envtesting.Options{CRDs: []string{"crd"}, AddToScheme: v1alpha1.AddToScheme}
	os.Exit(envtesting.Main(m, opts, func(e *envtesting.Env) (err error) {
		k8s = e.Client
		namespace, err = envtesting.CreateNamespace(context.Background(), k8s, "trainingjob-")
		return err
	}))
}

// readSample decodes config/samples/<file>, refusing unknown fields.
func readSample(t *testing.T, file string) *v1alpha1.TrainingJob {
	t.Helper()
	var tj v1alpha1.TrainingJob
	if err := envtesting.ReadYAML(filepath.Join("samples", file), &tj); err != nil {
		t.Fatal(err)
	}
	return &tj
}

// valid returns a small valid TrainingJob named name.
func valid(name string) *v1alpha1.TrainingJob {
	return &v1alpha1.TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: v1alpha1.TrainingJobSpec{
			Workers:              4,
			BackoffLimitPerIndex: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "trainer", Image: "registry.example/train:1"}},
			}},
		},
	}
}

// create creates tj and fails the test on error.
func create(t *testing.T, tj *v1alpha1.TrainingJob) {
	t.Helper()
	if err := k8s.Create(context.Background(), tj); err != nil {
		t.Fatalf("creating TrainingJob %s: %v", tj.Name, err)
	}
}

// testName turns a test's name into an object name of at most 63 characters.
func testName(t *testing.T) string { return envtesting.ObjectName(t.Name(), 63) }

func TestSampleAccepted(t *testing.T) {
	for _, file := range []string{"trainingjob.yaml", "trainingjob-launcher.yaml"} {
		t.Run(file, func(t *testing.T) {
			tj := readSample(t, file)
			tj.Namespace = namespace
			create(t, tj)
			var got v1alpha1.TrainingJob
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tj), &got); err != nil {
				t.Fatal(err)
			}
			// Nothing is pruned: the schemaless templates keep every field.
			if diff := cmp.Diff(readSample(t, file).Spec, got.Spec); diff != "" {
				t.Errorf("stored spec (-sample +stored):\n%s", diff)
			}
		})
	}
}

func TestInvalidSpecRejected(t *testing.T) {
	exitCodes := func(op batchv1.PodFailurePolicyOnExitCodesOperator, values ...int32) *v1alpha1.PodFailurePolicy {
		return &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
			Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{Operator: op, Values: values},
		}}}
	}
	tests := []struct {
		name      string
		edit      func(*v1alpha1.TrainingJobSpec)
		wantField string
		wantMsg   string
	}{
		{"no workers", func(s *v1alpha1.TrainingJobSpec) { s.Workers = 0 }, "spec.workers", "greater than or equal to 1"},
		{"too many workers", func(s *v1alpha1.TrainingJobSpec) { s.Workers = 100001 }, "spec.workers", "less than or equal to 100000"},
		{"negative parallelism", func(s *v1alpha1.TrainingJobSpec) { s.Parallelism = ptr.To[int32](-1) }, "spec.parallelism", "greater than or equal to 0"},
		{"negative backoffLimitPerIndex", func(s *v1alpha1.TrainingJobSpec) { s.BackoffLimitPerIndex = ptr.To[int32](-1) }, "spec.backoffLimitPerIndex", "greater than or equal to 0"},
		{"maxFailedIndexes above workers", func(s *v1alpha1.TrainingJobSpec) { s.MaxFailedIndexes = ptr.To[int32](5) }, "spec.maxFailedIndexes", "may not exceed workers"},
		{"succeededCount above workers", func(s *v1alpha1.TrainingJobSpec) { s.SuccessPolicy = &v1alpha1.SuccessPolicy{SucceededCount: 5} }, "spec.successPolicy.succeededCount", "may not exceed workers"},
		{"succeededCount zero", func(s *v1alpha1.TrainingJobSpec) { s.SuccessPolicy = &v1alpha1.SuccessPolicy{} }, "spec.successPolicy.succeededCount", "greater than or equal to 1"},
		{"unknown action", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)
			s.PodFailurePolicy.Rules[0].Action = "Retry"
		}, "spec.podFailurePolicy.rules[0].action", "Unsupported value"},
		{"rule with no requirement", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{Action: batchv1.PodFailurePolicyActionIgnore}}}
		}, "spec.podFailurePolicy.rules[0]", "exactly one of onExitCodes and onPodConditions"},
		{"rule with two requirements", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)
			s.PodFailurePolicy.Rules[0].OnPodConditions = []v1alpha1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}}
		}, "spec.podFailurePolicy.rules[0]", "exactly one of onExitCodes and onPodConditions"},
		{"too many rules", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 1)
			for range 20 {
				s.PodFailurePolicy.Rules = append(s.PodFailurePolicy.Rules, s.PodFailurePolicy.Rules[0])
			}
		}, "spec.podFailurePolicy.rules", "must have at most 20 items"},
		{"exit code 0 with In", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 0, 1)
		},
			"spec.podFailurePolicy.rules[0].onExitCodes.values", "0 may not be listed with the operator In"},
		{"exit code listed twice", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpNotIn, 3, 3)
		},
			"spec.podFailurePolicy.rules[0].onExitCodes.values[1]", "Duplicate value"},
		{"no exit codes", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpNotIn)
			s.PodFailurePolicy.Rules[0].OnExitCodes.Values = []int32{}
		},
			"spec.podFailurePolicy.rules[0].onExitCodes.values", "at least 1 items"},
		{"unknown operator", func(s *v1alpha1.TrainingJobSpec) { s.PodFailurePolicy = exitCodes("Equals", 3) },
			"spec.podFailurePolicy.rules[0].onExitCodes.operator", "Unsupported value"},
		{"bad container name", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = exitCodes(batchv1.PodFailurePolicyOnExitCodesOpIn, 3)
			s.PodFailurePolicy.Rules[0].OnExitCodes.ContainerName = ptr.To("Trainer_1")
		}, "spec.podFailurePolicy.rules[0].onExitCodes.containerName", "should match"},
		{"bad condition status", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []v1alpha1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: "Maybe"}},
			}}}
		}, "spec.podFailurePolicy.rules[0].onPodConditions[0].status", "Unsupported value"},
		{"managedBy without a domain", func(s *v1alpha1.TrainingJobSpec) { s.ManagedBy = ptr.To("trainer") }, "spec.managedBy", "should match"},
		{"managedBy too long", func(s *v1alpha1.TrainingJobSpec) { s.ManagedBy = ptr.To("example.com/" + strings.Repeat("x", 60)) }, "spec.managedBy", "may not be more than 63"},
		{"zero deadline", func(s *v1alpha1.TrainingJobSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](0) }, "spec.activeDeadlineSeconds", "greater than or equal to 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
			tt.edit(&tj.Spec)
			envtesting.RequireInvalid(t, k8s.Create(context.Background(), tj), tt.wantField, tt.wantMsg)
		})
	}
}

// TestBackoffLimitPerIndexDefault checks that a run without
// backoffLimitPerIndex gets 0, so that maxFailedIndexes and the action FailIndex
// (which need per-index retries on a batch/v1 Job) are always meaningful.
func TestBackoffLimitPerIndexDefault(t *testing.T) {
	tj := valid(testName(t))
	tj.Spec.BackoffLimitPerIndex = nil
	tj.Spec.MaxFailedIndexes = ptr.To[int32](1)
	tj.Spec.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailIndex,
		OnExitCodes: &v1alpha1.PodFailurePolicyOnExitCodes{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
	}}}
	create(t, tj)
	if got := tj.Spec.BackoffLimitPerIndex; got == nil || *got != 0 {
		t.Errorf("stored backoffLimitPerIndex = %v, want 0", got)
	}
}

// TestInvalidDurationRejected writes the backoff as JSON, since a typed
// metav1.Duration cannot hold a malformed duration.
func TestInvalidDurationRejected(t *testing.T) {
	tests := []struct {
		name      string
		backoff   map[string]any
		wantField string
	}{
		{"initial", map[string]any{"initial": "soon"}, "spec.backoff.initial"},
		{"max", map[string]any{"max": "10 minutes"}, "spec.backoff.max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(valid(testName(t)))
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("TrainingJob"))
			if err := unstructured.SetNestedMap(u.Object, tt.backoff, "spec", "backoff"); err != nil {
				t.Fatal(err)
			}
			envtesting.RequireInvalid(t, k8s.Create(context.Background(), u), tt.wantField, "should match")
		})
	}
}

func TestSpecUpdates(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*v1alpha1.TrainingJobSpec)
		wantField string // empty: the update is accepted
		wantMsg   string
	}{
		{"parallelism may change", func(s *v1alpha1.TrainingJobSpec) { s.Parallelism = ptr.To[int32](1) }, "", ""},
		{"suspend may change", func(s *v1alpha1.TrainingJobSpec) { s.Suspend = ptr.To(true) }, "", ""},
		{"workers", func(s *v1alpha1.TrainingJobSpec) { s.Workers = 5 }, "spec.workers", "workers is immutable"},
		{"template", func(s *v1alpha1.TrainingJobSpec) { s.Template.Spec.Containers[0].Image = "other:2" }, "spec.template", "template is immutable"},
		{"template while suspended (a queue places the pods)", func(s *v1alpha1.TrainingJobSpec) {
			s.Suspend, s.Template.Spec.NodeSelector = ptr.To(true), map[string]string{"pool": "a"}
		}, "", ""},
		{"backoffLimitPerIndex changed", func(s *v1alpha1.TrainingJobSpec) { s.BackoffLimitPerIndex = ptr.To[int32](2) }, "spec.backoffLimitPerIndex", "is immutable"},
		{"backoffLimitPerIndex removed (so defaulted to 0)", func(s *v1alpha1.TrainingJobSpec) { s.BackoffLimitPerIndex = nil }, "spec.backoffLimitPerIndex", "is immutable"},
		{"managedBy added", func(s *v1alpha1.TrainingJobSpec) { s.ManagedBy = ptr.To("example.com/other") }, "spec.managedBy", "managedBy is immutable"},
		{"podFailurePolicy added", func(s *v1alpha1.TrainingJobSpec) {
			s.PodFailurePolicy = &v1alpha1.PodFailurePolicy{Rules: []v1alpha1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []v1alpha1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}},
			}}}
		}, "spec.podFailurePolicy", "podFailurePolicy is immutable"},
		{"successPolicy added", func(s *v1alpha1.TrainingJobSpec) { s.SuccessPolicy = &v1alpha1.SuccessPolicy{SucceededCount: 2} }, "spec.successPolicy", "successPolicy is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
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

func TestStatusWrites(t *testing.T) {
	start := metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	end := metav1.NewTime(start.Add(time.Hour))
	cond := func(typ batchv1.JobConditionType, status corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status, Reason: "Test", LastTransitionTime: start}
	}
	running := v1alpha1.TrainingJobStatus{
		StartTime: &start, Active: 2, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0), Succeeded: 2, Failed: 1,
		CompletedIndexes: "0,2", FailedIndexes: ptr.To(""),
		UncountedTerminatedPods: &v1alpha1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}, Failed: []types.UID{"b"}},
	}
	complete := v1alpha1.TrainingJobStatus{
		StartTime: &start, CompletionTime: &end, Succeeded: 4, Failed: 1, CompletedIndexes: "0-3",
		Conditions: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)},
	}
	failed := v1alpha1.TrainingJobStatus{
		StartTime: &start, Succeeded: 2, Failed: 2, CompletedIndexes: "0,2", FailedIndexes: ptr.To("1"),
		Conditions: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)},
	}
	tests := []struct {
		name      string
		before    *v1alpha1.TrainingJobStatus // written first, when not nil; must be accepted
		status    func() v1alpha1.TrainingJobStatus
		wantField string // empty: accepted
		wantMsg   string
	}{
		{name: "running", status: func() v1alpha1.TrainingJobStatus { return running }},
		{name: "complete", before: &running, status: func() v1alpha1.TrainingJobStatus { return complete }},
		{name: "failed", before: &running, status: func() v1alpha1.TrainingJobStatus { return failed }},
		{name: "suspended", status: func() v1alpha1.TrainingJobStatus {
			return v1alpha1.TrainingJobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}}
		}},
		{name: "completionTime without Complete", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.CompletionTime = &end
			return s
		}, wantField: "status.completionTime", wantMsg: "only on a run with the condition Complete"},
		{name: "completionTime with Complete False", status: func() v1alpha1.TrainingJobStatus {
			s := *complete.DeepCopy()
			s.Conditions[1].Status = corev1.ConditionFalse
			return s
		}, wantField: "status.completionTime", wantMsg: "only on a run with the condition Complete"},
		{name: "Complete without completionTime", status: func() v1alpha1.TrainingJobStatus {
			s := *complete.DeepCopy()
			s.CompletionTime = nil
			return s
		}, wantField: "status.completionTime", wantMsg: "needs completionTime"},
		{name: "Complete and Failed", status: func() v1alpha1.TrainingJobStatus {
			s := *complete.DeepCopy()
			s.Conditions = append(s.Conditions, cond(batchv1.JobFailed, corev1.ConditionTrue))
			return s
		}, wantField: "status.conditions", wantMsg: "both Complete and Failed"},
		{name: "completionTime before startTime", status: func() v1alpha1.TrainingJobStatus {
			s := *complete.DeepCopy()
			s.StartTime, s.CompletionTime = &end, &start
			return s
		}, wantField: "status.completionTime", wantMsg: "before startTime"},
		{name: "finished with active pods", status: func() v1alpha1.TrainingJobStatus {
			s := *failed.DeepCopy()
			s.Active = 1
			return s
		}, wantField: "status.active", wantMsg: "no active pods"},
		{name: "finished with terminating pods", status: func() v1alpha1.TrainingJobStatus {
			s := *complete.DeepCopy()
			s.Terminating = ptr.To[int32](1)
			return s
		}, wantField: "status.terminating", wantMsg: "no terminating pods"},
		{name: "finished with uncounted pods", status: func() v1alpha1.TrainingJobStatus {
			s := *failed.DeepCopy()
			s.UncountedTerminatedPods = &v1alpha1.UncountedTerminatedPods{Failed: []types.UID{"b"}}
			return s
		}, wantField: "status.uncountedTerminatedPods", wantMsg: "no uncounted pods"},
		{name: "more ready than active", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Ready = ptr.To[int32](3)
			return s
		}, wantField: "status.ready", wantMsg: "may not exceed active"},
		{name: "succeeded decreases", before: &running, status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Succeeded = 1
			return s
		}, wantField: "status.succeeded", wantMsg: "may not decrease"},
		{name: "succeeded cleared", before: &running, status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Succeeded = 0
			return s
		}, wantField: "status.succeeded", wantMsg: "may not decrease"},
		{name: "failed decreases", before: &running, status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Failed = 0
			return s
		}, wantField: "status.failed", wantMsg: "may not decrease"},
		{name: "finished run reopened", before: &failed, status: func() v1alpha1.TrainingJobStatus {
			s := *failed.DeepCopy()
			s.Conditions = s.Conditions[:1]
			return s
		}, wantField: "status.conditions", wantMsg: "stays finished"},
		{name: "more succeeded than workers", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Succeeded = 5
			return s
		}, wantField: "status.succeeded", wantMsg: "may not exceed spec.workers"},
		{name: "negative active", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Active, s.Ready = -1, nil
			return s
		}, wantField: "status.active", wantMsg: "greater than or equal to 0"},
		{name: "malformed completedIndexes", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.CompletedIndexes = "0,a"
			return s
		}, wantField: "status.completedIndexes", wantMsg: "should match"},
		{name: "malformed failedIndexes", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.FailedIndexes = ptr.To("1-")
			return s
		}, wantField: "status.failedIndexes", wantMsg: "should match"},
		{name: "unknown condition type", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Conditions = []batchv1.JobCondition{cond("Finished", corev1.ConditionTrue)}
			return s
		}, wantField: "status.conditions", wantMsg: "condition types are"},
		{name: "unknown condition status", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, "Maybe")}
			return s
		}, wantField: "status.conditions", wantMsg: "True, False or Unknown"},
		{name: "condition type twice", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue), cond(batchv1.JobSuspended, corev1.ConditionFalse)}
			return s
		}, wantField: "status.conditions[1]", wantMsg: "Duplicate value"},
		{name: "uncounted UID twice", status: func() v1alpha1.TrainingJobStatus {
			s := *running.DeepCopy()
			s.UncountedTerminatedPods.Succeeded = []types.UID{"a", "a"}
			return s
		}, wantField: "status.uncountedTerminatedPods.succeeded[1]", wantMsg: "Duplicate value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tj := valid(testName(t))
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

// TestRole checks that the role grants what the controller of TrainingJobs does
// (the controller's integration tests run it with this role only). role.yaml is
// generated from controller/rbac.go: the ClusterRole first, then the leader
// election Role.
func TestRole(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("role.yaml has %d documents, want 2 (the ClusterRole, the leader election Role)", len(docs))
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &role); err != nil || role.Kind != "ClusterRole" {
		t.Fatalf("decoding the ClusterRole: %v (kind %q)", err, role.Kind)
	}
	var leader rbacv1.Role
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &leader); err != nil || leader.Kind != "Role" {
		t.Fatalf("decoding the leader election Role: %v (kind %q)", err, leader.Kind)
	}
	for _, verb := range []string{"get", "create", "update"} {
		if !slices.ContainsFunc(leader.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "coordination.k8s.io") && slices.Contains(r.Resources, "leases") && slices.Contains(r.Verbs, verb)
		}) {
			t.Errorf("the leader election Role does not allow %s on leases", verb)
		}
	}
	allowed := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	tests := []struct{ group, resource, verb string }{
		{v1alpha1.GroupName, "trainingjobs", "get"},
		{v1alpha1.GroupName, "trainingjobs", "list"},
		{v1alpha1.GroupName, "trainingjobs", "watch"},
		{v1alpha1.GroupName, "trainingjobs/status", "update"},
		{"", "pods", "get"},
		{"", "pods", "list"},
		{"", "pods", "watch"},
		{"", "pods", "create"},
		{"", "pods", "delete"},
		{"", "pods", "patch"},
		{"events.k8s.io", "events", "create"},
		{"events.k8s.io", "events", "patch"},
	}
	for _, tt := range tests {
		if !allowed(tt.group, tt.resource, tt.verb) {
			t.Errorf("role does not allow %s on %s in group %q", tt.verb, tt.resource, tt.group)
		}
	}
	// The spec belongs to the user.
	if allowed(v1alpha1.GroupName, "trainingjobs", "update") || allowed(v1alpha1.GroupName, "trainingjobs", "patch") {
		t.Error("role allows writing TrainingJob specs; a controller writes only the status")
	}
	// The role is valid for the API server.
	role.Name = "jobkit-trainingjob-" + strings.ToLower(fmt.Sprint(time.Now().UnixNano()))
	if err := k8s.Create(context.Background(), &role); err != nil {
		t.Errorf("the API server refused the role: %v", err)
	}
}
