package ownedpods_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// A roles owner is presented with its identity, managedBy and suspension, and
// never as finished, whatever its group conditions.
func TestAsWorkload(t *testing.T) {
	tests := []struct {
		name       string
		conditions []metav1.Condition
	}{
		{name: "running"},
		{name: "completed", conditions: []metav1.Condition{{Type: plaingroup.ConditionCompleted, Status: metav1.ConditionTrue, Reason: "AllJobsCompleted"}}},
		{name: "failed", conditions: []metav1.Condition{{Type: plaingroup.ConditionFailed, Status: metav1.ConditionTrue, Reason: "ReachedMaxRestarts"}}},
		{name: "restarting", conditions: []metav1.Condition{{Type: plaingroup.ConditionRestarting, Status: metav1.ConditionTrue}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &batchv1.Job{}
			g := &ownedpods.Workload{Namespace: "ns", Name: "g", UID: "u", Deleting: true, Generation: 3, ResourceVersion: "7",
				Object: obj, ManagedBy: ptr.To("me"), Suspend: true, Status: ownedpods.Status{Conditions: tt.conditions, TerminalState: "Completed"}}
			got := g.AsWorkload()
			want := &plan.Workload{Namespace: "ns", Name: "g", UID: "u", Deleting: true, Generation: 3, ResourceVersion: "7",
				Object: obj, Spec: plan.Spec{ManagedBy: ptr.To("me"), Suspend: ptr.To(true)}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("AsWorkload (-want +got):\n%s", diff)
			}
		})
	}
}
