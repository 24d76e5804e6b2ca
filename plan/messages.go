package plan

import (
	"fmt"

	"github.com/jobkit/jobkit/owner"
)

// The messages of the conditions and events the plan writes: the upstream
// controller's words, with the owner's kind (owner.Kind.Kind) where upstream says
// "Job" (the %s), so that a batch/v1 Job reads exactly as under the
// kube-controller-manager and a TrainingJob reads "TrainingJob was active longer
// than specified deadline". Condition reasons are upstream's whatever the kind
// (BackoffLimitExceeded, JobSuspended...): tools that read a Job's conditions read
// any owner's.
const (
	msgBackoffLimitExceeded     = "%s has reached the specified backoff limit"
	msgDeadlineExceeded         = "%s was active longer than specified deadline"
	msgMaxFailedIndexesExceeded = "%s has exceeded the specified maximal number of failed indexes"
	msgFailedIndexes            = "%s has failed indexes"
	msgSuspended                = "%s suspended"
	msgResumed                  = "%s resumed"
	msgCompleted                = "%s completed"
	// Messages that name no kind.
	msgCompletionsReached = "Reached expected number of succeeded pods"
	msgTooManySucceeded   = "Too many succeeded pods running after completion count reached"

	reasonSuspended = "JobSuspended"
	reasonResumed   = "JobResumed"
)

// message renders one of the msg formats that name the owner's kind.
func message(kind owner.Kind, format string) string {
	return fmt.Sprintf(format, kind.Kind)
}

// noun is how the plan's own reasons (Deletion.Reason, PodAction.Reason, Plan.Skip)
// name the owner: "job" for a batch/v1 Job, as they always did, else its kind.
func noun(kind owner.Kind) string {
	if kind == owner.BatchJob {
		return "job"
	}
	return kind.Kind
}
