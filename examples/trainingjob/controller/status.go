package controller

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/jobkit/jobkit/examples/trainingjob/api/v1alpha1"
	"github.com/jobkit/jobkit/plan"
	"github.com/jobkit/jobkit/reconcile"
)

// StatusWriter is the reconcile.StatusWriter of TrainingJobs: it writes the status
// through the status subresource of the TrainingJob in Workload.Object, with
// Workload.ResourceVersion as the precondition (a stale one gets the API server's
// Conflict), and returns the TrainingJob as stored, converted by Workload. The
// object it is given is never modified.
type StatusWriter struct {
	// Client writes to the API server (a manager's GetClient()).
	Client client.Client
}

var _ reconcile.StatusWriter = StatusWriter{}

// WriteStatus writes status as the status of w's TrainingJob.
func (s StatusWriter) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	tj, ok := w.Object.(*v1alpha1.TrainingJob)
	if !ok {
		return nil, fmt.Errorf("%w: StatusWriter: Workload.Object is a %T, not a *v1alpha1.TrainingJob", reconcile.ErrInvalidArgument, w.Object)
	}
	tj = tj.DeepCopy()
	tj.ResourceVersion = w.ResourceVersion
	tj.Status = v1alpha1.StatusFromJob(status)
	if err := s.Client.Status().Update(ctx, tj); err != nil {
		return nil, err
	}
	return Workload(tj)
}
