package upstream_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/jobkit/jobkit/examples/jobset/controller"
	"github.com/jobkit/jobkit/examples/jobset/upstream"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// sample is a JobSet of JobSet's API with every field the conversion reads,
// as stored without JobSet's webhook (no completionMode, no restartPolicy).
func sample() *jobset.JobSet {
	tmpl := func(pods int32) batchv1.JobTemplateSpec {
		return batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Parallelism: ptr.To(pods), Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
				VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}, {Name: "data", MountPath: "/data"}, {Name: "logs", MountPath: "/logs"}}}}}}}}
	}
	claim := func(name string) corev1.PersistentVolumeClaim {
		return corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kind": name}},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}}}
	}
	return &jobset.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train", UID: "u1", Generation: 3, ResourceVersion: "42"},
		Spec: jobset.JobSetSpec{
			ReplicatedJobs: []jobset.ReplicatedJob{
				{Name: "leader", Replicas: 1, Template: tmpl(1)},
				{Name: "workers", GroupName: "w", Replicas: 2, Template: tmpl(4),
					DependsOn: []jobset.DependsOn{{Name: "leader", Status: jobset.DependencyReady}}},
			},
			Network:       &jobset.Network{Subdomain: "net", EnableDNSHostnames: ptr.To(false)},
			SuccessPolicy: &jobset.SuccessPolicy{Operator: jobset.OperatorAny, TargetReplicatedJobs: []string{"leader"}},
			FailurePolicy: &jobset.FailurePolicy{MaxRestarts: 2, RestartStrategy: jobset.BlockingRecreate,
				Rules: []jobset.FailurePolicyRule{{Action: jobset.FailJobSet, OnJobFailureReasons: []string{"PodFailurePolicy"}}}},
			Coordinator:             &jobset.Coordinator{ReplicatedJob: "workers", JobIndex: 1, PodIndex: 3},
			ManagedBy:               ptr.To("example.com/mine"),
			TTLSecondsAfterFinished: ptr.To[int32](60),
			Suspend:                 ptr.To(true),
			VolumeClaimPolicies: []jobset.VolumeClaimPolicy{
				{Templates: []corev1.PersistentVolumeClaim{claim("cache")},
					RetentionPolicy: &jobset.VolumeRetentionPolicy{WhenDeleted: ptr.To(jobset.RetentionPolicyRetain)}},
				{Templates: []corev1.PersistentVolumeClaim{claim("data"), claim("logs")}},
			},
		},
		Status: jobset.JobSetStatus{Restarts: 2, RestartsCountTowardsMax: 1, TerminalState: "",
			Conditions:           []metav1.Condition{{Type: "Suspended", Status: metav1.ConditionTrue, Reason: "SuspendedJobs"}},
			ReplicatedJobsStatus: []jobset.ReplicatedJobStatus{{Name: "leader", Ready: 1, Active: 1}, {Name: "workers", Succeeded: 2}}},
	}
}

func TestSpec(t *testing.T) {
	got := upstream.Spec(sample())
	want := plaingroup.Spec{
		Name: "train",
		Roles: []plaingroup.Role{
			{Name: "leader", Replicas: 1},
			{Name: "workers", GroupName: "w", Replicas: 2, DependsOn: []plaingroup.Dependency{{Name: "leader", Status: plaingroup.DependsOnStatus("Ready")}}},
		},
		SuccessPolicy: &plaingroup.SuccessPolicy{Operator: plaingroup.Operator("Any"), TargetReplicatedJobs: []string{"leader"}},
		FailurePolicy: &plaingroup.FailurePolicy{MaxRestarts: 2, RestartStrategy: plaingroup.RestartStrategy("BlockingRecreate"),
			Rules: []plaingroup.Rule{{Action: plaingroup.Action("FailJobSet"), OnJobFailureReasons: []string{"PodFailurePolicy"}}}},
		Coordinator:             &plaingroup.Coordinator{ReplicatedJob: "workers", JobIndex: 1, PodIndex: 3},
		Subdomain:               "net",
		TTLSecondsAfterFinished: ptr.To[int32](60),
		ManagedBy:               "example.com/mine",
		VolumeClaims: []plaingroup.VolumeClaim{
			{Name: "cache", Policy: 0, Template: 0, WhenDeleted: "Retain"},
			{Name: "data", Policy: 1, Template: 0},
			{Name: "logs", Policy: 1, Template: 1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Spec() mismatch (-want +got):\n%s", diff)
	}
}

// Input applies the webhook's defaults to its copy and leaves the JobSet as
// the informer gave it.
func TestInputDefaultsWithoutModifying(t *testing.T) {
	js := sample()
	before := js.DeepCopy()
	in := upstream.Input(js)
	assert.Empty(t, cmp.Diff(before, js), "Input modified the JobSet")

	assert.Equal(t, "train", in.Name)
	assert.Equal(t, "ns", in.Namespace)
	assert.Equal(t, int64(3), in.Generation)
	assert.Equal(t, "42", in.ResourceVersion)
	assert.Equal(t, upstream.Kind, in.Owner)
	assert.Same(t, js, in.Object)
	assert.True(t, in.Suspend)
	assert.Equal(t, ptr.To(false), in.EnableDNSHostnames)
	assert.Equal(t, ptr.To(true), in.PublishNotReadyAddresses, "the webhook's default")
	for i, tmpl := range in.Templates {
		assert.Equal(t, ptr.To(batchv1.IndexedCompletion), tmpl.Spec.CompletionMode, "template %d", i)
		assert.Equal(t, corev1.RestartPolicyOnFailure, tmpl.Spec.Template.Spec.RestartPolicy, "template %d", i)
	}
	assert.Equal(t, "failurePolicyRule0", in.Spec.FailurePolicy.Rules[0].Name, "the webhook's rule name")
	var claims []string
	for _, c := range in.ClaimTemplates {
		claims = append(claims, c.Name+"/"+c.Labels["kind"])
	}
	assert.Equal(t, []string{"cache/cache", "data/data", "logs/logs"}, claims, "the claim templates of every policy, in order")
	assert.Equal(t, "Delete", in.Spec.VolumeClaims[1].WhenDeleted, "the webhook's retention")
	assert.Empty(t, in.Validate())
}

func TestStatusRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   jobset.JobSetStatus
	}{
		{name: "empty", in: jobset.JobSetStatus{}},
		{name: "sample", in: sample().Status},
		{name: "finished with in-place attempts", in: jobset.JobSetStatus{Restarts: 4, TerminalState: string(jobset.JobSetFailed),
			PreviousInPlaceRestartAttempt: ptr.To[int32](2), CurrentInPlaceRestartAttempt: ptr.To[int32](3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := upstream.Status(&tt.in)
			got := upstream.APIStatus(&s)
			if diff := cmp.Diff(tt.in, got); diff != "" {
				t.Errorf("APIStatus(Status(s)) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		mutate    func(*jobset.JobSet)
		wantField string
	}{
		{name: "valid", mutate: func(*jobset.JobSet) {}},
		{name: "rule naming a missing role", wantField: "spec.failurePolicy.rules[0].targetReplicatedJobs[0]",
			mutate: func(js *jobset.JobSet) { js.Spec.FailurePolicy.Rules[0].TargetReplicatedJobs = []string{"nobody"} }},
		{name: "coordinator pod out of range", wantField: "spec.coordinator.podIndex",
			mutate: func(js *jobset.JobSet) { js.Spec.Coordinator.PodIndex = 4 }},
		{name: "claim template with a namespace", wantField: "spec.volumeClaimPolicies[1]",
			mutate: func(js *jobset.JobSet) { js.Spec.VolumeClaimPolicies[1].Templates[0].Namespace = "other" }},
		{name: "claim mounted by no role", wantField: "spec.replicatedJobs",
			mutate: func(js *jobset.JobSet) { js.Spec.VolumeClaimPolicies[1].Templates[1].Name = "unmounted" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js := sample()
			tt.mutate(js)
			errs := upstream.Validate(js)
			if tt.wantField == "" {
				assert.Empty(t, errs)
				return
			}
			require.NotEmpty(t, errs)
			assert.Equal(t, tt.wantField, errs[0].Field, "Validate() = %v", errs)
		})
	}
}

// JobSetType converts both ways and reads managedBy.
func TestJobSetType(t *testing.T) {
	js := sample()
	in, err := upstream.JobSetType.ChildJobs(js)
	require.NoError(t, err)
	assert.Equal(t, "train", in.Name)
	require.NoError(t, upstream.JobSetType.SetChildJobsStatus(js, childjobs.Status{Restarts: 7}))
	assert.Equal(t, int32(7), js.Status.Restarts)
	assert.Equal(t, ptr.To("example.com/mine"), upstream.JobSetType.ManagedBy(js))
	assert.NotNil(t, upstream.JobSetType.New())
}

func BenchmarkInput(b *testing.B) {
	for _, roles := range []int{1, 10, 100} {
		js := sample()
		base := js.Spec.ReplicatedJobs[1]
		js.Spec.Coordinator, js.Spec.ReplicatedJobs = nil, nil
		for i := range roles {
			rj := base
			rj.Name, rj.DependsOn = fmt.Sprintf("role-%d", i), nil
			js.Spec.ReplicatedJobs = append(js.Spec.ReplicatedJobs, rj)
		}
		js.Spec.SuccessPolicy.TargetReplicatedJobs = nil
		b.Run(fmt.Sprintf("roles=%d", roles), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				upstream.Input(js)
			}
		})
	}
}

// controller.Gated validates JobSet's JobSets under the controller's
// InPlaceRestart gate, as JobSet's webhook does: off, restartStrategy
// InPlaceRestart is refused in JobSet's words; on, it is checked by the
// in-place template rules and accepted.
func TestGatedJobSetType(t *testing.T) {
	js := sample()
	js.Spec.FailurePolicy = &jobset.FailurePolicy{MaxRestarts: 2, RestartStrategy: jobset.InPlaceRestart}
	for i := range js.Spec.ReplicatedJobs {
		s := &js.Spec.ReplicatedJobs[i].Template.Spec
		s.BackoffLimit, s.PodReplacementPolicy = ptr.To[int32](math.MaxInt32), ptr.To(batchv1.Failed)
	}
	for _, on := range []bool{false, true} {
		typ := controller.Gated(upstream.JobSetType, controller.Options{InPlaceRestart: on})
		in, err := typ.ChildJobs(js)
		require.NoError(t, err)
		errs := in.Validate()
		if on {
			assert.Empty(t, errs, "gate on")
			continue
		}
		require.Len(t, errs, 1, "gate off: %v", errs)
		assert.Equal(t, "spec.failurePolicy.restartStrategy", errs[0].Field)
		assert.Equal(t, "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled", errs[0].Detail)
	}
	// The ungated type validates nothing of the gates.
	in, err := upstream.JobSetType.ChildJobs(js)
	require.NoError(t, err)
	assert.Empty(t, in.Validate())
}
