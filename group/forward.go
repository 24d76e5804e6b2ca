package group

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobkit/jobkit/groups/childjobs"
	plaingroup "github.com/jobkit/jobkit/plain/group"
	"github.com/jobkit/jobkit/plan"
)

// Input is childjobs.Input.
//
// Deprecated: use childjobs.Input.
type Input = childjobs.Input

// Status is childjobs.Status.
//
// Deprecated: use childjobs.Status.
type Status = childjobs.Status

// Plan is childjobs.Plan.
//
// Deprecated: use childjobs.Plan.
type Plan = childjobs.Plan

// JobAction is childjobs.JobAction.
//
// Deprecated: use childjobs.JobAction.
type JobAction = childjobs.JobAction

// Deletion is childjobs.Deletion.
//
// Deprecated: use childjobs.Deletion.
type Deletion = childjobs.Deletion

// Event is plan.Event, which childjobs.Plan now carries.
//
// Deprecated: use plan.Event.
type Event = plan.Event

// Compute is childjobs.Compute.
//
// Deprecated: use childjobs.Compute.
func Compute(in *Input) (Plan, error) { return childjobs.Compute(in) }

// ReadChild is childjobs.ReadChild.
//
// Deprecated: use childjobs.ReadChild.
func ReadChild(job *batchv1.Job) (plaingroup.Child, error) { return childjobs.ReadChild(job) }
