package jobstatus

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	plainindexes "github.com/jobkit/jobkit/plain/indexes"
)

// changes records which parts of the status differ between the old and the new Job.
// The API server checks a rule only when a field it reads changed, so that a status
// that was already invalid (for example completedIndexes beyond completions right
// after an elastic scale-down) does not block unrelated updates.
type changes struct {
	finished, complete, failed, failureTarget bool
	completedIndexes, failedIndexes           bool
	active, ready, terminating                bool
	startTime, completionTime, uncounted      bool
}

var allChanged = changes{true, true, true, true, true, true, true, true, true, true, true, true}

func diff(old, cur *batchv1.Job) changes {
	o, n := &old.Status, &cur.Status
	return changes{
		finished:         IsFinished(o) != IsFinished(n),
		complete:         IsConditionTrue(o.Conditions, batchv1.JobComplete) != IsConditionTrue(n.Conditions, batchv1.JobComplete),
		failed:           IsConditionTrue(o.Conditions, batchv1.JobFailed) != IsConditionTrue(n.Conditions, batchv1.JobFailed),
		failureTarget:    IsConditionTrue(o.Conditions, batchv1.JobFailureTarget) != IsConditionTrue(n.Conditions, batchv1.JobFailureTarget),
		completedIndexes: o.CompletedIndexes != n.CompletedIndexes,
		failedIndexes:    !ptr.Equal(o.FailedIndexes, n.FailedIndexes),
		active:           o.Active != n.Active,
		ready:            !ptr.Equal(o.Ready, n.Ready),
		terminating:      !ptr.Equal(o.Terminating, n.Terminating),
		startTime:        !timeEqual(o.StartTime, n.StartTime),
		completionTime:   !timeEqual(o.CompletionTime, n.CompletionTime),
		uncounted:        !equality.Semantic.DeepEqual(o.UncountedTerminatedPods, n.UncountedTerminatedPods),
	}
}

// Validate checks a Job's status against every rule the API server applies to Job
// status updates, as if every field had just changed. It is stricter than the API
// server, which skips rules about fields an update leaves alone; use ValidateUpdate to
// predict whether a particular write is accepted. Paths start at "status".
func Validate(job *batchv1.Job) field.ErrorList {
	return validateStatus(job, allChanged)
}

// ValidateUpdate returns the errors the API server (Kubernetes 1.37, JobManagedBy GA)
// would report for a status update from old to cur, with its messages and field paths:
//
//   - counters, ready and terminating are non-negative; uncounted UIDs are non-empty
//     and unique across both lists;
//   - Failed=True needs FailureTarget=True; Complete=True needs SuccessCriteriaMet=True
//     and a completionTime; Complete excludes Failed and FailureTarget;
//     SuccessCriteriaMet excludes Failed and FailureTarget; a Job with a successPolicy
//     completes only through SuccessCriteriaMet;
//   - completionTime only with Complete, never before startTime, never changed once set;
//   - a finished Job has no active, terminating or uncounted pods, and a startTime
//     unless it is suspended with completions 0;
//   - ready <= active;
//   - completedIndexes and failedIndexes parse below completions, do not overlap,
//     completedIndexes only for Indexed Jobs, failedIndexes only with
//     backoffLimitPerIndex;
//   - terminal conditions (Complete, Failed, FailureTarget, SuccessCriteriaMet) never
//     go back, and SuccessCriteriaMet cannot appear after Complete;
//   - failed never decreases; succeeded never decreases except for an Indexed Job
//     whose completions equal its parallelism (an elastic Job that may shrink);
//   - startTime of an unsuspended Job, once set, does not change, except in the
//     update that resumes it (the Suspended condition goes from True to False;
//     kubernetes#134769).
//
// As in the API server, a rule about a field is checked only when the update changes
// that field or a condition it depends on.
func ValidateUpdate(old, cur *batchv1.Job) field.ErrorList {
	errs := validateStatus(cur, diff(old, cur))
	return append(errs, validateTransition(old, cur)...)
}

func validateStatus(job *batchv1.Job, ch changes) field.ErrorList {
	var errs field.ErrorList
	st := &job.Status
	path := field.NewPath("status")
	nonNegative := func(v int32, name string) {
		if v < 0 {
			errs = append(errs, field.Invalid(path.Child(name), int64(v), "must be greater than or equal to 0"))
		}
	}
	nonNegative(st.Active, "active")
	nonNegative(st.Succeeded, "succeeded")
	nonNegative(st.Failed, "failed")
	if st.Ready != nil {
		nonNegative(*st.Ready, "ready")
	}
	if st.Terminating != nil {
		nonNegative(*st.Terminating, "terminating")
	}
	if u := st.UncountedTerminatedPods; u != nil {
		seen := sets.New[types.UID]()
		check := func(uids []types.UID, name string) {
			for i, uid := range uids {
				p := path.Child("uncountedTerminatedPods", name).Index(i)
				switch {
				case uid == "":
					errs = append(errs, field.Invalid(p, uid, "must not be empty"))
				case seen.Has(uid):
					errs = append(errs, field.Duplicate(p, uid))
				default:
					seen.Insert(uid)
				}
			}
		}
		check(u.Succeeded, "succeeded")
		check(u.Failed, "failed")
	}

	conds := path.Child("conditions")
	complete := IsConditionTrue(st.Conditions, batchv1.JobComplete)
	failed := IsConditionTrue(st.Conditions, batchv1.JobFailed)
	failureTarget := IsConditionTrue(st.Conditions, batchv1.JobFailureTarget)
	successMet := IsConditionTrue(st.Conditions, batchv1.JobSuccessCriteriaMet)
	finished := complete || failed
	invalidCond := func(msg string) {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, msg))
	}

	if (ch.complete || ch.failed) && complete && failed {
		invalidCond("cannot set Complete=True and Failed=true conditions")
	}
	if (ch.complete || ch.failureTarget) && complete && failureTarget {
		invalidCond("cannot set Complete=True and FailureTarget=true conditions")
	}
	if ch.complete || ch.completionTime {
		if st.CompletionTime != nil && !complete {
			errs = append(errs, field.Invalid(path.Child("completionTime"), st.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
		}
		if st.CompletionTime == nil && complete {
			errs = append(errs, field.Required(path.Child("completionTime"), "completionTime is required for Complete jobs"))
		}
	}
	if (ch.startTime || ch.completionTime) && st.StartTime != nil && st.CompletionTime != nil && st.CompletionTime.Before(st.StartTime) {
		errs = append(errs, field.Invalid(path.Child("completionTime"), st.CompletionTime, "completionTime cannot be set before startTime"))
	}
	if (ch.failed || ch.failureTarget) && failed && !failureTarget {
		invalidCond("cannot set Failed=True condition without the FailureTarget=true condition")
	}
	if ch.complete && complete && !successMet {
		invalidCond("cannot set Complete=True condition without the SuccessCriteriaMet=true condition")
	}
	if (ch.finished || ch.active) && finished && st.Active > 0 {
		errs = append(errs, field.Invalid(path.Child("active"), st.Active, "active>0 is invalid for finished job"))
	}
	if (ch.finished || ch.startTime) && finished && st.StartTime == nil && !suspendedWithZeroCompletions(job) {
		errs = append(errs, field.Required(path.Child("startTime"), "startTime is required for finished job"))
	}
	if (ch.finished || ch.uncounted) && finished && st.UncountedTerminatedPods != nil &&
		len(st.UncountedTerminatedPods.Succeeded)+len(st.UncountedTerminatedPods.Failed) > 0 {
		errs = append(errs, field.Invalid(path.Child("uncountedTerminatedPods"), st.UncountedTerminatedPods, "uncountedTerminatedPods needs to be empty for finished job"))
	}
	if (ch.finished || ch.terminating) && finished && st.Terminating != nil && *st.Terminating > 0 {
		errs = append(errs, field.Invalid(path.Child("terminating"), st.Terminating, "terminating>0 is invalid for finished job"))
	}
	if (ch.ready || ch.active) && st.Ready != nil && *st.Ready > st.Active {
		errs = append(errs, field.Invalid(path.Child("ready"), *st.Ready, "cannot set more ready pods than active"))
	}

	spec := &job.Spec
	indexed := ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	var completed, failedIx plainindexes.Intervals
	completedOK, failedOK := false, false
	if spec.Completions != nil {
		var err error
		completed, err = plainindexes.Parse(st.CompletedIndexes, int(*spec.Completions))
		completedOK = err == nil
		if ch.completedIndexes && err != nil {
			errs = append(errs, field.Invalid(path.Child("completedIndexes"), st.CompletedIndexes, "error parsing completedIndexes: "+err.Error()))
		}
		if spec.BackoffLimitPerIndex != nil && st.FailedIndexes != nil {
			failedIx, err = plainindexes.Parse(*st.FailedIndexes, int(*spec.Completions))
			failedOK = err == nil
			if ch.failedIndexes && err != nil {
				errs = append(errs, field.Invalid(path.Child("failedIndexes"), st.FailedIndexes, "error parsing failedIndexes: "+err.Error()))
			}
		}
	}
	if ch.completedIndexes && !indexed && st.CompletedIndexes != "" {
		errs = append(errs, field.Invalid(path.Child("completedIndexes"), st.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if ch.failedIndexes && spec.BackoffLimitPerIndex == nil && st.FailedIndexes != nil {
		errs = append(errs, field.Invalid(path.Child("failedIndexes"), *st.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if (ch.failedIndexes || ch.completedIndexes) && completedOK && failedOK {
		if x, ok := firstCommon(completed, failedIx); ok {
			errs = append(errs, field.Invalid(path.Child("failedIndexes"), *st.FailedIndexes, fmt.Sprintf("failedIndexes and completedIndexes overlap at index: %d", x)))
		}
	}

	if successMet && failed {
		invalidCond("cannot set SuccessCriteriaMet=True and Failed=true conditions")
	}
	if successMet && failureTarget {
		invalidCond("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions")
	}
	if spec.SuccessPolicy != nil && !successMet && complete {
		invalidCond("cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True")
	}
	return errs
}

func validateTransition(old, cur *batchv1.Job) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("status")
	o, n := &old.Status, &cur.Status
	for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
		if IsConditionTrue(o.Conditions, t) && !IsConditionTrue(n.Conditions, t) {
			errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
		}
	}
	if n.Failed < o.Failed {
		errs = append(errs, field.Invalid(path.Child("failed"), n.Failed, "cannot decrease the failed counter"))
	}
	elastic := ptr.Deref(cur.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion &&
		ptr.Equal(cur.Spec.Completions, cur.Spec.Parallelism)
	if n.Succeeded < o.Succeeded && !elastic {
		errs = append(errs, field.Invalid(path.Child("succeeded"), n.Succeeded, "cannot decrease the succeeded counter"))
	}
	if n.CompletionTime != nil && o.CompletionTime != nil && !n.CompletionTime.Equal(o.CompletionTime) {
		errs = append(errs, field.Invalid(path.Child("completionTime"), n.CompletionTime, "completionTime cannot be mutated"))
	}
	resuming := IsConditionTrue(o.Conditions, batchv1.JobSuspended) && conditionFalse(n.Conditions, batchv1.JobSuspended)
	if o.StartTime != nil && !timeEqual(o.StartTime, n.StartTime) && !ptr.Deref(cur.Spec.Suspend, false) && !resuming {
		errs = append(errs, field.Required(path.Child("startTime"), "startTime cannot be removed for unsuspended job"))
	}
	oldMet := IsConditionTrue(o.Conditions, batchv1.JobSuccessCriteriaMet)
	newMet := IsConditionTrue(n.Conditions, batchv1.JobSuccessCriteriaMet)
	if oldMet && !newMet {
		errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if IsConditionTrue(o.Conditions, batchv1.JobComplete) && !oldMet && newMet {
		errs = append(errs, field.Invalid(path.Child("conditions"), field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

// suspendedWithZeroCompletions says whether job is suspended with completions 0:
// the API server lets such a Job finish without a start time (kubernetes#132144).
func suspendedWithZeroCompletions(job *batchv1.Job) bool {
	return ptr.Deref(job.Spec.Suspend, false) && job.Spec.Completions != nil && *job.Spec.Completions == 0
}

func conditionFalse(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	c := FindCondition(conds, t)
	return c != nil && c.Status == corev1.ConditionFalse
}

// firstCommon returns the lowest index in both sets.
func firstCommon(a, b plainindexes.Intervals) (int, bool) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].First, b[j].First), min(a[i].Last, b[j].Last)
		if lo <= hi {
			return lo, true
		}
		if a[i].Last < b[j].Last {
			i++
		} else {
			j++
		}
	}
	return 0, false
}

func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}
