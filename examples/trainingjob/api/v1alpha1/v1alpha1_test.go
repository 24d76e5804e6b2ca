package v1alpha1

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var at = metav1.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))

// full returns a TrainingJob with every pointer and slice set.
func full() *TrainingJob {
	return &TrainingJob{
		ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ml", Labels: map[string]string{"a": "b"}},
		Spec: TrainingJobSpec{
			Workers: 4, Parallelism: ptr.To[int32](2), BackoffLimitPerIndex: ptr.To[int32](3), MaxFailedIndexes: ptr.To[int32](1),
			Backoff: &RetryBackoff{Initial: &metav1.Duration{Duration: time.Second}, Max: &metav1.Duration{Duration: time.Minute}},
			PodFailurePolicy: &PodFailurePolicy{Rules: []PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &PodFailurePolicyOnExitCodes{
					ContainerName: ptr.To("trainer"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42, 3},
				}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []PodFailurePolicyOnPodConditionsPattern{
					{Type: "DisruptionTarget"}, {Type: "Custom", Status: corev1.ConditionFalse},
				}},
			}},
			SuccessPolicy:         &SuccessPolicy{SucceededCount: 3},
			Suspend:               ptr.To(false),
			ActiveDeadlineSeconds: ptr.To[int64](3600),
			ManagedBy:             ptr.To("example.com/trainer"),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "trainer", Image: "x", Command: []string{"train"}}}}},
			Launcher: &Launcher{BackoffLimit: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "launcher", Image: "x", Command: []string{"launch"}}}}}},
			MaxRestarts: ptr.To[int32](2),
		},
		Status: TrainingJobStatus{
			Conditions:     []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: at}},
			StartTime:      &at,
			CompletionTime: &at,
			Active:         1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](2), Succeeded: 3, Failed: 4,
			CompletedIndexes: "0-2", FailedIndexes: ptr.To("3"),
			UncountedTerminatedPods: &UncountedTerminatedPods{Succeeded: []types.UID{"a"}, Failed: []types.UID{"b"}},
			Restarts:                2, RestartsCountTowardsMax: 1, TerminalState: "Completed",
			GroupConditions: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", LastTransitionTime: at}},
			Launcher:        &RoleStatus{Attempt: 2, Succeeded: 1, Current: fullAttempt()},
			Workers:         &RoleStatus{Attempt: 2, Succeeded: 9, Failed: 3, Current: fullAttempt()},
		},
	}
}

// fullAttempt returns an AttemptStatus with every pointer and slice set.
func fullAttempt() AttemptStatus {
	return AttemptStatus{
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: at}},
		StartTime:  &at, CompletionTime: &at,
		Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](2), Succeeded: 3, Failed: 4,
		CompletedIndexes: "0-2", FailedIndexes: ptr.To("3"),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}, Failed: []types.UID{"b"}},
	}
}

// TestDeepCopy checks that a copy is equal and shares nothing: changing every
// pointer and slice of the copy leaves the original as it was.
func TestDeepCopy(t *testing.T) {
	orig := full()
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("DeepCopy (-orig +copy):\n%s", diff)
	}
	s := &cp.Spec
	*s.Parallelism, *s.BackoffLimitPerIndex, *s.MaxFailedIndexes = 9, 9, 9
	s.Backoff.Initial.Duration, s.Backoff.Max.Duration = 0, 0
	s.PodFailurePolicy.Rules[0].OnExitCodes.Values[0] = 7
	*s.PodFailurePolicy.Rules[0].OnExitCodes.ContainerName = "other"
	s.PodFailurePolicy.Rules[1].OnPodConditions[0].Type = "Other"
	s.SuccessPolicy.SucceededCount = 1
	*s.Suspend, *s.ActiveDeadlineSeconds, *s.ManagedBy = true, 1, "other.com/x"
	s.Template.Spec.Containers[0].Command[0] = "false"
	*s.Launcher.BackoffLimit, *s.MaxRestarts = 9, 9
	s.Launcher.Template.Spec.Containers[0].Command[0] = "false"
	st := &cp.Status
	st.Conditions[0].Reason = "changed"
	st.StartTime.Time, st.CompletionTime.Time = time.Time{}, time.Time{}
	*st.Ready, *st.Terminating, *st.FailedIndexes = 0, 0, ""
	st.UncountedTerminatedPods.Succeeded[0], st.UncountedTerminatedPods.Failed[0] = "x", "y"
	st.GroupConditions[0].Reason = "changed"
	st.Launcher.Attempt, st.Workers.Failed = 0, 0
	for _, r := range []*RoleStatus{st.Launcher, st.Workers} {
		c := &r.Current
		c.Conditions[0].Reason = "changed"
		c.StartTime.Time, c.CompletionTime.Time = time.Time{}, time.Time{}
		*c.Ready, *c.Terminating, *c.FailedIndexes = 0, 0, ""
		c.UncountedTerminatedPods.Succeeded[0] = "x"
	}
	if diff := cmp.Diff(full(), orig); diff != "" {
		t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
	}

	list := &TrainingJobList{Items: []TrainingJob{*full()}}
	lc := list.DeepCopyObject().(*TrainingJobList)
	lc.Items[0].Spec.Template.Spec.Containers[0].Name = "other"
	if list.Items[0].Spec.Template.Spec.Containers[0].Name != "trainer" {
		t.Error("changing a copied list changed the original")
	}
	if (*TrainingJob)(nil).DeepCopy() != nil || (*TrainingJobList)(nil).DeepCopy() != nil || (*TrainingJobStatus)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"TrainingJob", "TrainingJobList"} {
		if !s.Recognizes(SchemeGroupVersion.WithKind(kind)) {
			t.Errorf("scheme does not recognise %s", kind)
		}
	}
}

// TestStatusMirrorsJobStatus checks that TrainingJobStatus has exactly the
// fields of batchv1.JobStatus with the same JSON names, and those of a run with
// a launcher, so that a field added to JobStatus by a later Kubernetes version
// is noticed here. (AttemptStatus converts to JobStatus in Go: the compiler
// checks its fields; the test checks its JSON names.)
func TestStatusMirrorsJobStatus(t *testing.T) {
	tags := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, f.Tag.Get("json"))
		}
		slices.Sort(out) // the order of the fields carries no meaning
		return out
	}
	want := tags(reflect.TypeFor[batchv1.JobStatus]())
	launcher := []string{"groupConditions,omitempty", "launcher,omitempty", "restarts,omitempty",
		"restartsCountTowardsMax,omitempty", "terminalState,omitempty", "workers,omitempty"}
	wantAll := slices.Sorted(slices.Values(append(slices.Clone(want), launcher...)))
	if diff := cmp.Diff(wantAll, tags(reflect.TypeFor[TrainingJobStatus]())); diff != "" {
		t.Errorf("JSON fields of TrainingJobStatus (-batchv1.JobStatus +TrainingJobStatus):\n%s", diff)
	}
	if diff := cmp.Diff(tags(reflect.TypeFor[batchv1.UncountedTerminatedPods]()), tags(reflect.TypeFor[UncountedTerminatedPods]())); diff != "" {
		t.Errorf("JSON fields of UncountedTerminatedPods (-batchv1 +v1alpha1):\n%s", diff)
	}
	if diff := cmp.Diff(want, tags(reflect.TypeFor[AttemptStatus]())); diff != "" {
		t.Errorf("JSON fields of AttemptStatus (-batchv1.JobStatus +AttemptStatus):\n%s", diff)
	}
}

func TestJobStatusRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   TrainingJobStatus
		want batchv1.JobStatus
	}{
		{name: "empty", in: TrainingJobStatus{}, want: batchv1.JobStatus{}},
		{
			name: "every field of a run without a launcher",
			in:   jobFields(full().Status),
			want: batchv1.JobStatus{
				Conditions:     []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: at}},
				StartTime:      &at,
				CompletionTime: &at,
				Active:         1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](2), Succeeded: 3, Failed: 4,
				CompletedIndexes: "0-2", FailedIndexes: ptr.To("3"),
				UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a"}, Failed: []types.UID{"b"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.JobStatus()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("JobStatus() (-want +got):\n%s", diff)
			}
			back := StatusFromJob(got)
			if diff := cmp.Diff(tt.in, back); diff != "" {
				t.Errorf("StatusFromJob(JobStatus()) (-want +got):\n%s", diff)
			}
			// Neither conversion shares memory with its input.
			if got.UncountedTerminatedPods != nil {
				got.UncountedTerminatedPods.Succeeded[0] = "changed"
				back.UncountedTerminatedPods.Failed[0] = "changed"
				*got.Ready = 99
				if tt.in.UncountedTerminatedPods.Succeeded[0] == "changed" || *tt.in.Ready == 99 {
					t.Error("JobStatus() shares memory with its receiver")
				}
				if got.UncountedTerminatedPods.Failed[0] == "changed" {
					t.Error("StatusFromJob shares memory with its input")
				}
			}
		})
	}
}

// jobFields returns s without the fields of a run with a launcher.
func jobFields(s TrainingJobStatus) TrainingJobStatus {
	s.Restarts, s.RestartsCountTowardsMax, s.TerminalState = 0, 0, ""
	s.GroupConditions, s.Launcher, s.Workers = nil, nil, nil
	return s
}

func TestAttemptStatusRoundTrip(t *testing.T) {
	for name, in := range map[string]AttemptStatus{"empty": {}, "every field": fullAttempt()} {
		t.Run(name, func(t *testing.T) {
			js := in.JobStatus()
			want := full().Status.JobStatus()
			if name == "empty" {
				want = batchv1.JobStatus{}
			}
			if diff := cmp.Diff(want, js); diff != "" {
				t.Fatalf("JobStatus() (-want +got):\n%s", diff)
			}
			back := AttemptStatusFromJob(js)
			if diff := cmp.Diff(in, back); diff != "" {
				t.Errorf("AttemptStatusFromJob(JobStatus()) (-want +got):\n%s", diff)
			}
			if js.UncountedTerminatedPods == nil {
				return
			}
			js.UncountedTerminatedPods.Succeeded[0], *js.Ready, js.Conditions[0].Reason = "changed", 99, "changed"
			if in.UncountedTerminatedPods.Succeeded[0] == "changed" || *in.Ready == 99 || in.Conditions[0].Reason == "changed" {
				t.Error("JobStatus() shares memory with its receiver")
			}
			back.UncountedTerminatedPods.Failed[0] = "changed"
			if js.UncountedTerminatedPods.Failed[0] == "changed" {
				t.Error("AttemptStatusFromJob shares memory with its input")
			}
		})
	}
}

func TestPolicies(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*TrainingJobSpec)
		wantFailure *batchv1.PodFailurePolicy
		wantSuccess *batchv1.SuccessPolicy
	}{
		{
			name: "none",
			edit: func(s *TrainingJobSpec) { s.PodFailurePolicy, s.SuccessPolicy = nil, nil },
		},
		{
			name: "exit codes sorted, condition status defaults to True",
			edit: func(*TrainingJobSpec) {},
			wantFailure: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr.To("trainer"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3, 42},
				}},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
					{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}, {Type: "Custom", Status: corev1.ConditionFalse},
				}},
			}},
			wantSuccess: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](3)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tj := full()
			tt.edit(&tj.Spec)
			before := tj.DeepCopy()
			gotFailure := tj.PodFailurePolicy()
			if diff := cmp.Diff(tt.wantFailure, gotFailure); diff != "" {
				t.Errorf("PodFailurePolicy() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSuccess, tj.SuccessPolicy()); diff != "" {
				t.Errorf("SuccessPolicy() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tj); diff != "" {
				t.Errorf("the conversions changed the TrainingJob (-before +after):\n%s", diff)
			}
			if gotFailure != nil {
				*gotFailure.Rules[0].OnExitCodes.ContainerName = "changed"
				if *tj.Spec.PodFailurePolicy.Rules[0].OnExitCodes.ContainerName == "changed" {
					t.Error("PodFailurePolicy() shares memory with the TrainingJob")
				}
			}
		})
	}
}
