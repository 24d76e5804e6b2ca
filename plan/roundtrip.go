package plan

import (
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// CheckStatusRoundTrip reports the fields of the package's status contract that do
// not survive convert: a custom resource's status conversion both ways, a
// batchv1.JobStatus converted to the resource's own status and back. It runs
// convert over statuses that set every field of the contract (a running owner, an
// Indexed one with failed indexes, a suspended one, a finished one), each set field
// also at its zero value where set and unset differ, and returns an error that
// names each field that came back different, with both values; nil when everything
// survives. Times are compared to the second; lastProbeTime of
// the conditions is not compared. Meant for a controller's tests:
//
//	if err := plan.CheckStatusRoundTrip(func(st batchv1.JobStatus) batchv1.JobStatus {
//		var s BatchRunStatus
//		s.setFrom(st)
//		return s.jobStatus()
//	}); err != nil {
//		t.Error(err)
//	}
func CheckStatusRoundTrip(convert func(batchv1.JobStatus) batchv1.JobStatus) error {
	var errs []error
	for _, sample := range statusSamples() {
		got := convert(*sample.st.DeepCopy())
		errs = append(errs, diffStatus(sample.name, sample.st, &got)...)
	}
	return errors.Join(errs...)
}

type statusSample struct {
	name string
	st   *batchv1.JobStatus
}

func statusSamples() []statusSample {
	at := func(min int) *metav1.Time {
		return ptr.To(metav1.NewTime(time.Date(2026, 3, 1, 12, min, 0, 0, time.UTC)))
	}
	cond := func(t batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, min int) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: *at(min), LastProbeTime: *at(min)}
	}
	return []statusSample{
		{"running", &batchv1.JobStatus{
			StartTime: at(1), Active: 3, Ready: ptr.To[int32](2), Terminating: ptr.To[int32](1),
			Succeeded: 4, Failed: 2,
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"s1", "s2"}, Failed: []types.UID{"f1"}},
			Conditions:              []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", 1)},
		}},
		{"started, nothing counted yet", &batchv1.JobStatus{
			StartTime: at(1), Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		}},
		{"indexed, failing", &batchv1.JobStatus{
			StartTime: at(1), Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0),
			Succeeded: 3, Failed: 5, CompletedIndexes: "0,2-3", FailedIndexes: ptr.To("1,4"),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Failed: []types.UID{"f2"}},
			Conditions:              []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue, "FailedIndexes", "Job has failed indexes", 5)},
		}},
		{"indexed, no failed index", &batchv1.JobStatus{
			StartTime: at(1), Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
			CompletedIndexes: "0", Succeeded: 1, FailedIndexes: ptr.To(""),
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		}},
		{"suspended", &batchv1.JobStatus{
			Ready: ptr.To[int32](0), Terminating: ptr.To[int32](2), Succeeded: 1,
			UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			Conditions:              []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", 3)},
		}},
		{"complete", &batchv1.JobStatus{
			StartTime: at(1), CompletionTime: at(9), Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0),
			Succeeded: 2, UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
			Conditions: []batchv1.JobCondition{
				cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, "CompletionsReached", "Reached expected number of succeeded pods", 8),
				cond(batchv1.JobComplete, corev1.ConditionTrue, "CompletionsReached", "Reached expected number of succeeded pods", 9),
			},
		}},
	}
}

// diffStatus names the fields of want that got does not hold.
func diffStatus(sample string, want, got *batchv1.JobStatus) []error {
	var errs []error
	check := func(field string, w, g any) {
		if !equality.Semantic.DeepEqual(w, g) {
			errs = append(errs, fmt.Errorf("status %q: %s lost: wrote %s, read back %s", sample, field, show(w), show(g)))
		}
	}
	check("startTime", seconds(want.StartTime), seconds(got.StartTime))
	check("completionTime", seconds(want.CompletionTime), seconds(got.CompletionTime))
	check("active", want.Active, got.Active)
	check("ready", want.Ready, got.Ready)
	check("terminating", want.Terminating, got.Terminating)
	check("succeeded", want.Succeeded, got.Succeeded)
	check("failed", want.Failed, got.Failed)
	check("completedIndexes", want.CompletedIndexes, got.CompletedIndexes)
	check("failedIndexes", want.FailedIndexes, got.FailedIndexes)
	check("uncountedTerminatedPods", want.UncountedTerminatedPods, got.UncountedTerminatedPods)
	check("conditions", comparableConditions(want.Conditions), comparableConditions(got.Conditions))
	return errs
}

func seconds(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return ptr.To(metav1.NewTime(t.Truncate(time.Second)))
}

// comparableConditions drops what the contract lets a conversion drop.
func comparableConditions(conds []batchv1.JobCondition) []batchv1.JobCondition {
	if len(conds) == 0 {
		return nil
	}
	out := make([]batchv1.JobCondition, len(conds))
	for i, c := range conds {
		c.LastProbeTime = metav1.Time{}
		c.LastTransitionTime = metav1.NewTime(c.LastTransitionTime.Truncate(time.Second).UTC())
		out[i] = c
	}
	return out
}

func show(v any) string {
	switch v := v.(type) {
	case *int32:
		if v == nil {
			return "unset"
		}
		return fmt.Sprint(*v)
	case *string:
		if v == nil {
			return "unset"
		}
		return fmt.Sprintf("%q", *v)
	case *metav1.Time:
		if v == nil {
			return "unset"
		}
		return v.UTC().Format(time.RFC3339)
	case *batchv1.UncountedTerminatedPods:
		if v == nil {
			return "unset"
		}
		return fmt.Sprintf("{succeeded: %v, failed: %v}", v.Succeeded, v.Failed)
	case []batchv1.JobCondition:
		parts := make([]string, len(v))
		for i, c := range v {
			parts[i] = fmt.Sprintf("%s=%s %s %q at %s", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime.UTC().Format(time.RFC3339))
		}
		return fmt.Sprint(parts)
	}
	return fmt.Sprintf("%v", v)
}
