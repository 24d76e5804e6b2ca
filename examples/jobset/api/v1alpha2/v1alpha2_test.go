package v1alpha2_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/examples/jobset/api/v1alpha2"
)

func full() *v1alpha2.JobSet {
	return &v1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"},
		Spec: v1alpha2.JobSetSpec{
			ReplicatedJobs: []v1alpha2.ReplicatedJob{
				{Name: "leader", Replicas: 1},
				{Name: "workers", Replicas: 2, DependsOn: []v1alpha2.DependsOn{{Name: "leader", Status: v1alpha2.DependsOnReady}}},
			},
			Network:       &v1alpha2.Network{EnableDNSHostnames: ptr.To(true), Subdomain: "s"},
			SuccessPolicy: &v1alpha2.SuccessPolicy{Operator: v1alpha2.OperatorAny, TargetReplicatedJobs: []string{"leader"}},
			FailurePolicy: &v1alpha2.FailurePolicy{MaxRestarts: 2, Rules: []v1alpha2.FailurePolicyRule{{
				Name: "r", Action: v1alpha2.RestartJob, OnJobFailureReasons: []string{"PodFailurePolicy"},
				OnJobFailureMessagePatterns: []string{"x.*"}, TargetReplicatedJobs: []string{"workers"}}}},
			StartupPolicy:           &v1alpha2.StartupPolicy{StartupPolicyOrder: v1alpha2.AnyOrder},
			Suspend:                 ptr.To(false),
			Coordinator:             &v1alpha2.Coordinator{ReplicatedJob: "leader"},
			ManagedBy:               ptr.To("example.com/x"),
			TTLSecondsAfterFinished: ptr.To[int32](10),
		},
		Status: v1alpha2.JobSetStatus{
			Conditions: []metav1.Condition{{Type: "Completed", Status: metav1.ConditionTrue}},
			Restarts:   1,
			ReplicatedJobsStatus: []v1alpha2.ReplicatedJobStatus{{Name: "workers", Ready: 1,
				JobRestarts: []int32{0, 1}, JobRestartsCountTowardsMax: []int32{0, 1}}},
		},
	}
}

// TestDeepCopy checks that a copy equals the original and shares no memory with it:
// changing every list and pointer of the copy leaves the original as it was.
func TestDeepCopy(t *testing.T) {
	orig := full()
	want := full()
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("DeepCopy differs (-orig +copy):\n%s", diff)
	}
	cp.Spec.ReplicatedJobs[1].DependsOn[0].Name = "changed"
	*cp.Spec.Network.EnableDNSHostnames = false
	cp.Spec.SuccessPolicy.TargetReplicatedJobs[0] = "changed"
	cp.Spec.FailurePolicy.Rules[0].OnJobFailureMessagePatterns[0] = "changed"
	*cp.Spec.ManagedBy = "changed"
	*cp.Spec.TTLSecondsAfterFinished = 99
	cp.Status.Conditions[0].Type = "changed"
	cp.Status.ReplicatedJobsStatus[0].JobRestarts[1] = 9
	if diff := cmp.Diff(want, orig); diff != "" {
		t.Errorf("changing the copy changed the original (-want +got):\n%s", diff)
	}
	var list v1alpha2.JobSetList
	list.Items = []v1alpha2.JobSet{*full()}
	lc := list.DeepCopyObject().(*v1alpha2.JobSetList)
	lc.Items[0].Spec.ReplicatedJobs[0].Name = "changed"
	if list.Items[0].Spec.ReplicatedJobs[0].Name != "leader" {
		t.Error("changing the list copy changed the original")
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha2.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []runtime.Object{&v1alpha2.JobSet{}, &v1alpha2.JobSetList{}} {
		gvks, _, err := s.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0].GroupVersion() != v1alpha2.SchemeGroupVersion {
			t.Errorf("ObjectKinds(%T) = %v, %v; want one kind of %v", obj, gvks, err, v1alpha2.SchemeGroupVersion)
		}
	}
}
