package controller_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/examples/trainingjob/controller"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

func TestStatusWriter(t *testing.T) {
	status := batchv1.JobStatus{Active: 2, Ready: ptr.To[int32](1), Succeeded: 3, CompletedIndexes: "0-2", FailedIndexes: ptr.To("")}
	tests := []struct {
		name       string
		workload   func(stored *v1alpha1.TrainingJob) *plan.Workload
		wantErr    func(error) bool
		wantStored batchv1.JobStatus
	}{
		{
			name:       "writes with the resourceVersion read and returns the run as stored",
			workload:   func(stored *v1alpha1.TrainingJob) *plan.Workload { return mustWorkload(t, stored) },
			wantStored: status,
		},
		{
			name: "a resourceVersion other than the stored one is a Conflict",
			workload: func(stored *v1alpha1.TrainingJob) *plan.Workload {
				w := mustWorkload(t, stored)
				w.ResourceVersion = "999"
				return w
			},
			wantErr: apierrors.IsConflict,
		},
		{
			name: "an Object that is not a TrainingJob",
			workload: func(stored *v1alpha1.TrainingJob) *plan.Workload {
				w := mustWorkload(t, stored)
				w.Object = &batchv1.Job{}
				return w
			},
			wantErr: func(err error) bool { return errors.Is(err, reconcile.ErrInvalidArgument) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.TrainingJob{}).Build()
			stored := validTJ(nil)
			stored.ResourceVersion, stored.UID = "", ""
			stored.Status = v1alpha1.TrainingJobStatus{}
			if err := c.Create(ctx, stored); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil { // with the fake's resourceVersion
				t.Fatal(err)
			}
			w := tt.workload(stored)
			before := stored.DeepCopy()
			got, err := controller.StatusWriter{Client: c}.WriteStatus(ctx, w, status)
			if diff := cmp.Diff(before, stored); diff != "" {
				t.Errorf("WriteStatus modified the object it was given (-before +after):\n%s", diff)
			}
			if tt.wantErr != nil {
				if got != nil || !tt.wantErr(err) {
					t.Fatalf("WriteStatus() = %v, %v; want nil and the expected error", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteStatus() error = %v", err)
			}
			after := &v1alpha1.TrainingJob{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), after); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantStored, after.Status.JobStatus()); diff != "" {
				t.Errorf("stored status (-want +got):\n%s", diff)
			}
			if got.ResourceVersion != after.ResourceVersion || got.ResourceVersion == stored.ResourceVersion {
				t.Errorf("returned resourceVersion %q, stored %q, read %q: want the stored one, new", got.ResourceVersion, after.ResourceVersion, stored.ResourceVersion)
			}
			if diff := cmp.Diff(tt.wantStored, got.Status); diff != "" {
				t.Errorf("returned Workload's status (-want +got):\n%s", diff)
			}
			if got.Backoff != controller.BackoffPolicy(nil) || got.Spec.Completions == nil || *got.Spec.Completions != stored.Spec.Workers {
				t.Errorf("returned Workload is not the converted run: %+v", *got)
			}
		})
	}
}

func mustWorkload(t *testing.T, tj *v1alpha1.TrainingJob) *plan.Workload {
	t.Helper()
	w, err := controller.Workload(tj)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
