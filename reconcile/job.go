package reconcile

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/plan"
)

// This file is the Reconciler's batch/v1 adapter: the Client of a Job controller,
// the StatusWriter and the OwnerReader of Jobs. plan.JobWorkload is the conversion
// of a Job onto the workload a sync takes.

// Client is everything the Reconciler of batch/v1 Jobs asks of the API server: the
// pod calls and the Job status write. A controller of another kind of owner gives
// New a PodClient and its own StatusWriter instead. Listing is not part of it: pods
// and owners come from the caller's cache. Implementations return the errors
// of k8s.io/apimachinery/pkg/api/errors (NotFound, Conflict, Invalid, ...) so that
// the Reconciler can tell them apart; reconciletest.RunClientConformance checks that
// an implementation behaves like the API server.
type Client interface {
	// PodClient holds the pod calls: CreatePod, DeletePod, PatchPod, GetPod.
	PodClient
	// UpdateJobStatus writes job.Status through the status subresource, with
	// job.ResourceVersion as the optimistic-concurrency precondition, and returns
	// the Job as stored.
	UpdateJobStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error)
}

// JobStatusWriter is the StatusWriter of batch/v1 Jobs: it writes through c's
// UpdateJobStatus the Job that w's Object holds, with the new status.
func JobStatusWriter(c Client) StatusWriter { return jobStatusWriter{c} }

type jobStatusWriter struct{ c Client }

func (j jobStatusWriter) WriteStatus(ctx context.Context, w *plan.Workload, status batchv1.JobStatus) (*plan.Workload, error) {
	job, ok := w.Object.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("%w: JobStatusWriter: Workload.Object is a %T, not a *batchv1.Job", ErrInvalidArgument, w.Object)
	}
	job = job.DeepCopy()
	job.Status = status
	out, err := j.c.UpdateJobStatus(ctx, job)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = job
	}
	return plan.JobWorkload(out), nil
}
