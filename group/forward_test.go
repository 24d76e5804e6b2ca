package group_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobkit/jobkit/group"
	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// The forwarders answer what childjobs answers, for the same input.
func TestForwarders(t *testing.T) {
	tests := []struct {
		name string
		in   group.Input
	}{
		{name: "a new group", in: group.Input{
			Name: "g", Namespace: "ns", UID: "u", Owner: metav1.SchemeGroupVersion.WithKind("Group"),
			Spec:      plaingroup.Spec{Roles: []plaingroup.Role{{Name: "r", Replicas: 1}}},
			Templates: []batchv1.JobTemplateSpec{{}},
		}},
		{name: "no name", in: group.Input{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			got, gotErr := group.Compute(&in)
			want, wantErr := childjobs.Compute(&in)
			if diff := cmp.Diff(want.String(), got.String()); diff != "" || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("group.Compute = %v, %v; childjobs.Compute = %v, %v (-want +got):\n%s", got.String(), gotErr, want.String(), wantErr, diff)
			}
		})
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}}
	got, gotErr := group.ReadChild(job)
	want, wantErr := childjobs.ReadChild(job)
	if diff := cmp.Diff(want, got); diff != "" || (gotErr == nil) != (wantErr == nil) {
		t.Errorf("group.ReadChild = %v; childjobs.ReadChild = %v (-want +got):\n%s", gotErr, wantErr, diff)
	}
}
