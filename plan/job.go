package plan

import (
	batchv1 "k8s.io/api/batch/v1"
)

// JobWorkload presents a batch/v1 Job as a Workload: the one conversion of a Job onto
// the workload, and the one place where plan reads a Job. Generation,
// ResourceVersion and Object are the Job's; Backoff stays zero (a Job has no retry delays of its own). The
// Workload points into job (its spec and status): do not modify job while the
// Workload is in use.
func JobWorkload(job *batchv1.Job) *Workload {
	return &Workload{
		Namespace:       job.Namespace,
		Name:            job.Name,
		UID:             job.UID,
		Deleting:        job.DeletionTimestamp != nil,
		Spec:            JobSpec(&job.Spec),
		Status:          job.Status,
		Generation:      job.Generation,
		ResourceVersion: job.ResourceVersion,
		Object:          job,
	}
}

// JobSpec presents a batchv1.JobSpec as a Spec, pointing into s.
func JobSpec(s *batchv1.JobSpec) Spec {
	return Spec{
		Parallelism:           s.Parallelism,
		Completions:           s.Completions,
		CompletionMode:        s.CompletionMode,
		BackoffLimit:          s.BackoffLimit,
		BackoffLimitPerIndex:  s.BackoffLimitPerIndex,
		MaxFailedIndexes:      s.MaxFailedIndexes,
		PodFailurePolicy:      s.PodFailurePolicy,
		SuccessPolicy:         s.SuccessPolicy,
		PodReplacementPolicy:  s.PodReplacementPolicy,
		Suspend:               s.Suspend,
		ActiveDeadlineSeconds: s.ActiveDeadlineSeconds,
		Selector:              s.Selector,
		Template:              &s.Template,
		ManagedBy:             s.ManagedBy,
	}
}
