package controller_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

func TestSpec(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha2.JobSetSpec
		want plaingroup.Spec
	}{
		{
			name: "roles only",
			spec: v1alpha2.JobSetSpec{ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "workers", Replicas: 3}}},
			want: plaingroup.Spec{Name: "js", Roles: []plaingroup.Role{{Name: "workers", Replicas: 3}}},
		},
		{
			name: "every field",
			spec: v1alpha2.JobSetSpec{
				ReplicatedJobs: []v1alpha2.ReplicatedJob{
					{Name: "leader", GroupName: "g", Replicas: 1},
					{Name: "workers", Replicas: 2, DependsOn: []v1alpha2.DependsOn{{Name: "leader", Status: v1alpha2.DependsOnComplete}}},
				},
				Network:       &v1alpha2.Network{Subdomain: "net", EnableDNSHostnames: ptr.To(false)},
				SuccessPolicy: &v1alpha2.SuccessPolicy{Operator: v1alpha2.OperatorAny, TargetReplicatedJobs: []string{"leader"}},
				FailurePolicy: &v1alpha2.FailurePolicy{MaxRestarts: 4, RestartStrategy: v1alpha2.BlockingRecreate, Rules: []v1alpha2.FailurePolicyRule{{
					Name: "r", Action: v1alpha2.RestartJob, OnJobFailureReasons: []string{"DeadlineExceeded"},
					OnJobFailureMessagePatterns: []string{"oom"}, TargetReplicatedJobs: []string{"workers"},
				}}},
				StartupPolicy:           &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.InOrder},
				Coordinator:             &v1alpha2.Coordinator{ReplicatedJob: "leader", PodIndex: 2},
				ManagedBy:               ptr.To("example.com/c"),
				TTLSecondsAfterFinished: ptr.To[int32](30),
			},
			want: plaingroup.Spec{
				Name: "js",
				Roles: []plaingroup.Role{
					{Name: "leader", GroupName: "g", Replicas: 1},
					{Name: "workers", Replicas: 2, DependsOn: []plaingroup.Dependency{{Name: "leader", Status: plaingroup.DependsOnComplete}}},
				},
				SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Any, TargetReplicatedJobs: []string{"leader"}},
				FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 4, RestartStrategy: plaingroup.BlockingRecreate, Rules: []plaingroup.Rule{{
					Name: "r", Action: plaingroup.RestartJob, OnJobFailureReasons: []string{"DeadlineExceeded"},
					OnJobFailureMessagePatterns: []string{"oom"}, TargetReplicatedJobs: []string{"workers"},
				}}},
				StartupOrder:            plaingroup.InOrder,
				Coordinator:             &plaingroup.Coordinator{ReplicatedJob: "leader", PodIndex: 2},
				Subdomain:               "net",
				TTLSecondsAfterFinished: ptr.To[int32](30),
				ManagedBy:               "example.com/c",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := &v1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js"}, Spec: tt.spec}
			before := js.DeepCopy()
			if diff := cmp.Diff(tt.want, controller.Spec(js)); diff != "" {
				t.Errorf("Spec() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, js); diff != "" {
				t.Errorf("Spec() modified the JobSet (-before +after):\n%s", diff)
			}
		})
	}
}

// A status converted onto childjobs.Status and back is the same status.
func TestStatusRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		status v1alpha2.JobSetStatus
	}{
		{name: "empty"},
		{name: "running after restarts", status: v1alpha2.JobSetStatus{
			Restarts: 3, RestartsCountTowardsMax: 2,
			Conditions: []metav1.Condition{{Type: "RestartingJobSet", Status: metav1.ConditionFalse, Reason: "r", LastTransitionTime: metav1.Unix(10, 0)}},
			ReplicatedJobsStatus: []v1alpha2.ReplicatedJobStatus{
				{Name: "leader", Ready: 1, Active: 1},
				{Name: "workers", Succeeded: 1, Failed: 1, Suspended: 2, JobRestarts: []int32{0, 2}, JobRestartsCountTowardsMax: []int32{0, 1}},
			},
		}},
		{name: "finished", status: v1alpha2.JobSetStatus{TerminalState: v1alpha2.Failed}},
		{name: "in-place restart attempts", status: v1alpha2.JobSetStatus{
			PreviousInPlaceRestartAttempt: ptr.To[int32](1), CurrentInPlaceRestartAttempt: ptr.To[int32](2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := controller.Status(&tt.status)
			if diff := cmp.Diff(tt.status, controller.APIStatus(&s)); diff != "" {
				t.Errorf("APIStatus(Status(s)) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInput(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	del := metav1.NewTime(now)
	js := &v1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "js", UID: "u", Generation: 4, ResourceVersion: "9", DeletionTimestamp: &del,
			Annotations: map[string]string{"alpha.jobset.sigs.k8s.io/exclusive-topology": "rack"}},
		Spec: v1alpha2.JobSetSpec{
			ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "a", Replicas: 1, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3)}}}},
			Suspend:        ptr.To(true),
			Network:        &v1alpha2.Network{EnableDNSHostnames: ptr.To(false), PublishNotReadyAddresses: ptr.To(false)},
			VolumeClaimPolicies: []v1alpha2.VolumeClaimPolicy{
				{Templates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, {ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: "x"}}}},
				{Templates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "out"}}},
					RetentionPolicy: &v1alpha2.VolumeRetentionPolicy{WhenDeleted: ptr.To(v1alpha2.RetentionPolicyRetain)}},
			},
		},
		Status: v1alpha2.JobSetStatus{Restarts: 2},
	}
	child := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "js-a-0"}}
	in := controller.Input(js, []*batchv1.Job{child}, true, "example.com/js", "example.com/jobs", now)
	want := &childjobs.Input{
		Name: "js", Namespace: "ml", UID: "u", Generation: 4, Owner: controller.Kind, Deleting: true,
		ResourceVersion: "9", Object: js, Annotations: js.Annotations,
		Spec: plaingroup.Spec{Name: "js", Roles: []plaingroup.Role{{Name: "a", Replicas: 1}}, VolumeClaims: []plaingroup.VolumeClaim{
			{Name: "data"}, {Name: "cache", Namespace: "x", Template: 1}, {Name: "out", Policy: 1, WhenDeleted: "Retain"},
		}},
		Templates: []batchv1.JobTemplateSpec{js.Spec.ReplicatedJobs[0].Template},
		ClaimTemplates: []corev1.PersistentVolumeClaim{js.Spec.VolumeClaimPolicies[0].Templates[0], js.Spec.VolumeClaimPolicies[0].Templates[1],
			js.Spec.VolumeClaimPolicies[1].Templates[0]},
		Suspend: true, EnableDNSHostnames: ptr.To(false), PublishNotReadyAddresses: ptr.To(false),
		Status:   childjobs.Status{Restarts: 2},
		Children: []*batchv1.Job{child}, ServiceExists: true,
		ControllerName: "example.com/js", ChildManagedBy: "example.com/jobs", Now: now,
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Input() (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*v1alpha2.JobSet)
		wantField string // "" for a valid JobSet
	}{
		{name: "valid", mutate: func(*v1alpha2.JobSet) {}},
		{name: "dependsOn a later role", mutate: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[0].DependsOn = []v1alpha2.DependsOn{{Name: "workers", Status: v1alpha2.DependsOnReady}}
		}, wantField: "spec.replicatedJobs[0].dependsOn"},
		{name: "negative parallelism in a template", mutate: func(js *v1alpha2.JobSet) {
			js.Spec.ReplicatedJobs[1].Template.Spec.Parallelism = ptr.To[int32](-1)
		}, wantField: "spec.replicatedJobs[1]"},
		{name: "bad message pattern", mutate: func(js *v1alpha2.JobSet) {
			js.Spec.FailurePolicy = &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Name: "r", Action: v1alpha2.FailJobSet, OnJobFailureMessagePatterns: []string{"("}}}}
		}, wantField: "spec.failurePolicy.rules[0].onJobFailureMessagePatterns[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := &v1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js"}, Spec: v1alpha2.JobSetSpec{ReplicatedJobs: []v1alpha2.ReplicatedJob{
				{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 2},
			}}}
			tt.mutate(js)
			errs := controller.Validate(js)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("Validate() = %v, want no error", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Field, tt.wantField) {
				t.Fatalf("Validate() = %v, want an error on %s", errs, tt.wantField)
			}
		})
	}
}

// Default writes JobSet's webhook defaults back into the JobSet, and leaves
// what is set alone; Validate then finds nothing to refuse.
func TestDefault(t *testing.T) {
	js := &v1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js"}, Spec: v1alpha2.JobSetSpec{
		ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "leader", Replicas: 1}, {Name: "workers", GroupName: "pool", Replicas: 2}},
		FailurePolicy:  &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Action: v1alpha2.FailJobSet}, {Name: "mine", Action: v1alpha2.RestartJob}}},
	}}
	js.Spec.ReplicatedJobs[1].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	controller.Default(js)
	want := v1alpha2.JobSetSpec{
		ReplicatedJobs: []v1alpha2.ReplicatedJob{
			{Name: "leader", GroupName: "default", Replicas: 1},
			{Name: "workers", GroupName: "pool", Replicas: 2},
		},
		SuccessPolicy: &v1alpha2.SuccessPolicy{Operator: v1alpha2.OperatorAll},
		StartupPolicy: &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.AnyOrder},
		FailurePolicy: &v1alpha2.FailurePolicy{RestartStrategy: v1alpha2.Recreate, Rules: []v1alpha2.FailurePolicyRule{
			{Name: "failurePolicyRule0", Action: v1alpha2.FailJobSet}, {Name: "mine", Action: v1alpha2.RestartJob}}},
		Network: &v1alpha2.Network{EnableDNSHostnames: ptr.To(true), PublishNotReadyAddresses: ptr.To(true)},
	}
	want.ReplicatedJobs[0].Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	want.ReplicatedJobs[0].Template.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	want.ReplicatedJobs[1].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	want.ReplicatedJobs[1].Template.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	if diff := cmp.Diff(want, js.Spec); diff != "" {
		t.Errorf("Default (-want +got):\n%s", diff)
	}
	if errs := controller.Validate(js); len(errs) > 0 {
		t.Errorf("Validate(defaulted) = %v", errs)
	}
}

// ValidateUpdate: the replicas are immutable, a suspended JobSet's pod
// nodeSelector is not.
func TestValidateUpdate(t *testing.T) {
	old := &v1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js"}, Spec: v1alpha2.JobSetSpec{Suspend: ptr.To(true),
		ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "workers", Replicas: 2}}}}
	js := old.DeepCopy()
	js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "a"}
	if errs := controller.ValidateUpdate(old, js); len(errs) > 0 {
		t.Errorf("ValidateUpdate(nodeSelector of a suspended JobSet) = %v, want none", errs)
	}
	js.Spec.ReplicatedJobs[0].Replicas = 3
	errs := controller.ValidateUpdate(old, js)
	if len(errs) != 1 || errs[0].Error() != "spec.replicatedJobs[0].replicas: Invalid value: 3: field is immutable" {
		t.Errorf("ValidateUpdate(replicas) = %v", errs)
	}
}

// BenchmarkInput is the conversion of each sync: a JobSet of two roles and 100
// children.
func BenchmarkInput(b *testing.B) {
	js := &v1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "js"}, Spec: v1alpha2.JobSetSpec{
		ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "leader", Replicas: 1}, {Name: "workers", Replicas: 99}},
		FailurePolicy:  &v1alpha2.FailurePolicy{Rules: []v1alpha2.FailurePolicyRule{{Name: "r", Action: v1alpha2.RestartJob}}},
	}, Status: v1alpha2.JobSetStatus{ReplicatedJobsStatus: []v1alpha2.ReplicatedJobStatus{{Name: "leader"}, {Name: "workers"}}}}
	children := make([]*batchv1.Job, 100)
	for i := range children {
		children[i] = &batchv1.Job{}
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		_ = controller.Input(js, children, true, "", "", now)
	}
}

// The Type's writes for outside integrations (Kueue's): ChildJobTemplates
// points at the JobSet's own role templates, in the roles' order, so a merge
// into them is a change of the JobSet; SetSuspend and SetManagedBy set the
// spec.
func TestJobSetTypeWrites(t *testing.T) {
	js := &v1alpha2.JobSet{Spec: v1alpha2.JobSetSpec{ReplicatedJobs: []v1alpha2.ReplicatedJob{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}}}}
	tmpls := controller.JobSetType.ChildJobTemplates(js)
	if len(tmpls) != 2 || tmpls[0] != &js.Spec.ReplicatedJobs[0].Template || tmpls[1] != &js.Spec.ReplicatedJobs[1].Template {
		t.Fatalf("ChildJobTemplates = %v, want pointers to the two replicated jobs' templates in order", tmpls)
	}
	tmpls[1].Spec.Template.Spec.NodeSelector = map[string]string{"pool": "x"}
	in, err := controller.JobSetType.ChildJobs(js)
	if err != nil {
		t.Fatal(err)
	}
	if in.Templates[1].Spec.Template.Spec.NodeSelector["pool"] != "x" {
		t.Errorf("a merge through ChildJobTemplates did not reach the conversion: %v", in.Templates[1].Spec.Template.Spec.NodeSelector)
	}
	controller.JobSetType.SetSuspend(js, true)
	controller.JobSetType.SetManagedBy(js, ptr.To("kueue.x-k8s.io/multikueue"))
	if !ptr.Deref(js.Spec.Suspend, false) || ptr.Deref(js.Spec.ManagedBy, "") != "kueue.x-k8s.io/multikueue" {
		t.Errorf("after SetSuspend and SetManagedBy: suspend %v, managedBy %v", js.Spec.Suspend, js.Spec.ManagedBy)
	}
}
