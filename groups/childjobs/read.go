package childjobs

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/jobstatus"
	"github.com/jobkit/jobkit/plain/fielderr"
	plaingroup "github.com/jobkit/jobkit/plain/group"
)

// ReadChild reads one child Job into the facts the group rules read:
//
//   - Role, Index, Attempt and JobAttempt from JobSet's labels (replicatedjob-name,
//     job-index, restart-attempt, job-restart-attempt), or from the annotations of
//     the same keys when a label is missing (JobSet writes both). The first three
//     are required; a missing job-restart-attempt is 0 (children created before
//     per-child restarts existed carry none). Indexes and attempts are
//     non-negative int32 numbers.
//   - Outcome from the terminal conditions: Complete=True succeeded, Failed=True
//     failed, with that condition's reason, message and lastTransitionTime.
//     FailureTarget and SuccessCriteriaMet alone leave the child Running: its
//     pods are still terminating, and JobSet (like every reader of a Job) waits
//     for the terminal condition.
//   - Ready, Succeeded, Failed and Active from status (nil ready is 0), Suspended
//     from spec.suspend, Deleting from the deletionTimestamp, Parallelism (nil
//     is 1, the API's default) and Completions from the spec.
//
// A Job it cannot read gets an error wrapping a *fielderr.Error that names the
// field ("metadata.labels[jobset.sigs.k8s.io/job-index]", "status.active") and
// the value; such a child must not be counted. ReadChild does not check whose
// child the Job is (Compute does, by controller reference) and does not modify
// the Job.
func ReadChild(job *batchv1.Job) (plaingroup.Child, error) {
	if job == nil {
		return plaingroup.Child{}, fmt.Errorf("group: %w", &fielderr.Error{Type: fielderr.Required, Field: "job", Detail: "nil Job"})
	}
	bad := func(e *fielderr.Error) (plaingroup.Child, error) {
		return plaingroup.Child{}, fmt.Errorf("group: job %s/%s: %w", job.Namespace, job.Name, e)
	}
	ch := plaingroup.Child{Name: job.Name}
	role, ok := label(job, plaingroup.LabelRoleName)
	if !ok || role == "" {
		return bad(&fielderr.Error{Type: fielderr.Required, Field: labelField(plaingroup.LabelRoleName), BadValue: role})
	}
	ch.Role = role
	for _, n := range []struct {
		key      string
		into     *int32
		required bool
	}{
		{plaingroup.LabelJobIndex, &ch.Index, true},
		{plaingroup.LabelRestartAttempt, &ch.Attempt, true},
		{plaingroup.LabelJobRestartAttempt, &ch.JobAttempt, false},
	} {
		s, ok := label(job, n.key)
		if !ok {
			if n.required {
				return bad(&fielderr.Error{Type: fielderr.Required, Field: labelField(n.key)})
			}
			continue
		}
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil || v < 0 {
			return bad(&fielderr.Error{Type: fielderr.Invalid, Field: labelField(n.key), BadValue: s, Detail: "must be a non-negative 32-bit integer"})
		}
		*n.into = int32(v)
	}
	st := &job.Status
	for _, c := range []struct {
		field string
		v     int32
	}{{"status.ready", ptr.Deref(st.Ready, 0)}, {"status.succeeded", st.Succeeded}, {"status.failed", st.Failed}, {"status.active", st.Active}} {
		if c.v < 0 {
			return bad(&fielderr.Error{Type: fielderr.Invalid, Field: c.field, BadValue: c.v, Detail: "must be greater than or equal to 0"})
		}
	}
	ch.Ready, ch.Succeeded, ch.Failed, ch.Active = ptr.Deref(st.Ready, 0), st.Succeeded, st.Failed, st.Active
	if t, done := jobstatus.Finished(st); done {
		c := jobstatus.FindCondition(st.Conditions, t)
		ch.Outcome = plaingroup.Succeeded
		if t == batchv1.JobFailed {
			ch.Outcome = plaingroup.Failed
		}
		ch.Reason, ch.Message, ch.FinishedAt = c.Reason, c.Message, c.LastTransitionTime.Time
	}
	ch.Suspended = ptr.Deref(job.Spec.Suspend, false)
	ch.Deleting = job.DeletionTimestamp != nil
	ch.Parallelism, ch.Completions = ptr.Deref(job.Spec.Parallelism, 1), job.Spec.Completions
	return ch, nil
}

// label returns the value of a JobSet key on the Job: its label, or its
// annotation when there is no label.
func label(job *batchv1.Job, key string) (string, bool) {
	if v, ok := job.Labels[key]; ok {
		return v, true
	}
	v, ok := job.Annotations[key]
	return v, ok
}

func labelField(key string) string { return "metadata.labels[" + key + "]" }
