package controllerruntime

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/plan"
)

// JobType is the Type of batch/v1 Jobs: plan.JobWorkload is the conversion, the
// status is the Job's own. A Job controller is Setup with JobType and a Config
// whose Owner is zero (owner.BatchJob); like upstream, it adopts the orphan pods
// its Jobs' selectors match.
var JobType = Type[*batchv1.Job]{
	New:       func() *batchv1.Job { return &batchv1.Job{} },
	Workload:  func(job *batchv1.Job) (*plan.Workload, error) { return plan.JobWorkload(job), nil },
	SetStatus: func(job *batchv1.Job, status batchv1.JobStatus) { job.Status = status },
	ManagedBy: func(job *batchv1.Job) *string { return job.Spec.ManagedBy },
}
