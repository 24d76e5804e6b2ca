package controller_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobkit/jobkit/groups/ownedpods"
)

// checkRolesStatusRoundTrip reports the fields of ownedpods.Status that do not
// survive convert (a status conversion both ways: ownedpods.Status to an owner's
// status and back), as plan.CheckStatusRoundTrip does for a Job's status. It runs
// convert over samples that together set every field of ownedpods.Status, of each
// ownedpods.RoleStatus and of its Job status (TestRolesStatusSamplesSetEveryField
// checks that they do), and names each field that came back different, with both
// values. Everything is compared exactly (times as instants, to the
// nanosecond; the samples hold whole seconds, as JSON does), but a nil and an
// empty list are one.
func checkRolesStatusRoundTrip(convert func(ownedpods.Status) ownedpods.Status) error {
	var errs []error
	for _, s := range rolesStatusSamples() {
		want := s.st
		got := convert(*deepCopyRolesStatus(&want))
		errs = append(errs, diffRolesStatus(s.name, &want, &got)...)
	}
	return errors.Join(errs...)
}

type rolesStatusSample struct {
	name string
	st   ownedpods.Status
}

func rolesStatusSamples() []rolesStatusSample {
	at := func(min int) time.Time { return time.Date(2026, 3, 1, 12, min, 0, 0, time.UTC) }
	mt := func(min int) *metav1.Time { return ptr.To(metav1.NewTime(at(min))) }
	group := func(typ string, status metav1.ConditionStatus, reason, msg string, min int) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: 3, LastTransitionTime: metav1.NewTime(at(min))}
	}
	job := func(typ batchv1.JobConditionType, reason string, min int) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue, Reason: reason, Message: reason + " message", LastProbeTime: *mt(min), LastTransitionTime: *mt(min)}
	}
	return []rolesStatusSample{
		{"not started", ownedpods.Status{}},
		{"workers starting, no launcher yet", ownedpods.Status{Roles: []ownedpods.RoleStatus{{
			Name: "workers",
			Job:  batchv1.JobStatus{StartTime: mt(1), Active: 4, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}},
		}}}},
		{"restarting after a worker failed", ownedpods.Status{
			Restarts: 2, RestartsCountTowardsMax: 1,
			Conditions: []metav1.Condition{group("RestartingJobSet", metav1.ConditionTrue, "DefaultFailurePolicy", "restarting", 5)},
			Roles: []ownedpods.RoleStatus{
				{Name: "workers", Attempt: 1, Succeeded: 3, Failed: 4, FailedOnTheirOwn: 2, Job: batchv1.JobStatus{
					StartTime: mt(2), Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](2),
					Succeeded: 1, Failed: 2, CompletedIndexes: "0", FailedIndexes: ptr.To("1,3-4"),
					UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"s1"}, Failed: []types.UID{"f1", "f2"}},
					Conditions:              []batchv1.JobCondition{job(batchv1.JobFailureTarget, "FailedIndexes", 4)},
				}},
				{Name: "launcher", Attempt: 2, Failed: 1, Job: batchv1.JobStatus{Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0)}},
			},
		}},
		{"completed", ownedpods.Status{
			Restarts: 1, RestartsCountTowardsMax: 1, TerminalState: "Completed",
			Conditions: []metav1.Condition{
				group("RestartingJobSet", metav1.ConditionFalse, "JobSetCompleted", "jobset completed", 9),
				group("Completed", metav1.ConditionTrue, "AllJobsCompleted", "jobset completed successfully", 9),
			},
			Roles: []ownedpods.RoleStatus{
				{Name: "workers", Attempt: 1, Succeeded: 8, Failed: 1, Job: batchv1.JobStatus{StartTime: mt(3), Succeeded: 4, CompletedIndexes: "0-3", FailedIndexes: ptr.To("")}},
				{Name: "launcher", Attempt: 1, Succeeded: 1, Failed: 1, FailedOnTheirOwn: 1, Job: batchv1.JobStatus{
					StartTime: mt(4), CompletionTime: mt(9), Succeeded: 1, CompletedIndexes: "0", FailedIndexes: ptr.To(""),
					UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
					Conditions:              []batchv1.JobCondition{job(batchv1.JobSuccessCriteriaMet, "CompletionsReached", 8), job(batchv1.JobComplete, "CompletionsReached", 9)},
				}},
			},
		}},
		{"failed at once by a FailJob rule", ownedpods.Status{
			TerminalState: "Failed",
			Conditions:    []metav1.Condition{group("Failed", metav1.ConditionTrue, "FailJobSetFailurePolicyAction", "applying FailJobSet failure policy action", 6)},
			Roles: []ownedpods.RoleStatus{
				{Name: "workers", Failed: 1, FailedOnTheirOwn: 1, Job: batchv1.JobStatus{StartTime: mt(1), Failed: 1, FailedIndexes: ptr.To(""),
					Conditions: []batchv1.JobCondition{job(batchv1.JobFailureTarget, "PodFailurePolicy", 5), job(batchv1.JobFailed, "PodFailurePolicy", 6)}}},
				{Name: "launcher"},
			},
		}},
	}
}

// deepCopyRolesStatus returns a copy of s that shares nothing with it, so that
// convert cannot change the sample it is compared with.
func deepCopyRolesStatus(s *ownedpods.Status) *ownedpods.Status {
	out := *s
	out.Conditions = append([]metav1.Condition(nil), s.Conditions...)
	out.Roles = nil
	for _, r := range s.Roles {
		r.Job = *r.Job.DeepCopy()
		out.Roles = append(out.Roles, r)
	}
	return &out
}

// diffRolesStatus names the fields of want that got does not hold.
func diffRolesStatus(sample string, want, got *ownedpods.Status) []error {
	var errs []error
	check := func(field string, w, g any) {
		if !equality.Semantic.DeepEqual(w, g) {
			errs = append(errs, fmt.Errorf("status %q: %s lost: wrote %+v, read back %+v", sample, field, w, g))
		}
	}
	check("restarts", want.Restarts, got.Restarts)
	check("restartsCountTowardsMax", want.RestartsCountTowardsMax, got.RestartsCountTowardsMax)
	check("conditions", want.Conditions, got.Conditions)
	check("terminalState", want.TerminalState, got.TerminalState)
	if len(want.Roles) != len(got.Roles) {
		return append(errs, fmt.Errorf("status %q: roles lost: wrote %d, read back %d", sample, len(want.Roles), len(got.Roles)))
	}
	for i := range want.Roles {
		w, g := &want.Roles[i], &got.Roles[i]
		p := fmt.Sprintf("roles[%d].", i)
		check(p+"name", w.Name, g.Name)
		check(p+"attempt", w.Attempt, g.Attempt)
		check(p+"succeeded", w.Succeeded, g.Succeeded)
		check(p+"failed", w.Failed, g.Failed)
		check(p+"failedOnTheirOwn", w.FailedOnTheirOwn, g.FailedOnTheirOwn)
		wj, gj := reflect.ValueOf(w.Job), reflect.ValueOf(g.Job)
		for j := range wj.NumField() {
			check(p+"job."+jsonName(wj.Type().Field(j)), wj.Field(j).Interface(), gj.Field(j).Interface())
		}
	}
	return errs
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// TestRolesStatusSamplesSetEveryField checks that the samples of
// checkRolesStatusRoundTrip set every field of ownedpods.Status, ownedpods.RoleStatus,
// batchv1.JobStatus and of their conditions somewhere, so that a field added to
// any of them is noticed here until a sample sets it (and the conversion keeps
// it).
func TestRolesStatusSamplesSetEveryField(t *testing.T) {
	set := map[reflect.Type]map[string]bool{}
	var visit func(v reflect.Value)
	visit = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				visit(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				visit(v.Index(i))
			}
		case reflect.Struct:
			if set[v.Type()] == nil {
				return
			}
			for i := range v.NumField() {
				if !v.Field(i).IsZero() {
					set[v.Type()][v.Type().Field(i).Name] = true
				}
				visit(v.Field(i))
			}
		}
	}
	types := []reflect.Type{
		reflect.TypeFor[ownedpods.Status](), reflect.TypeFor[ownedpods.RoleStatus](), reflect.TypeFor[batchv1.JobStatus](),
		reflect.TypeFor[metav1.Condition](), reflect.TypeFor[batchv1.JobCondition](), reflect.TypeFor[batchv1.UncountedTerminatedPods](),
	}
	for _, typ := range types {
		set[typ] = map[string]bool{}
	}
	for _, s := range rolesStatusSamples() {
		visit(reflect.ValueOf(s.st))
	}
	// A TrainingJob restarts by recreation: StatusFromRoles refuses in-place
	// attempts (TestStatusFromRolesRefuses), so no sample carries them.
	set[reflect.TypeFor[ownedpods.Status]()]["InPlace"] = true
	for _, typ := range types {
		for f := range typ.Fields() {
			if !set[typ][f.Name] {
				t.Errorf("no sample sets %s.%s", typ, f.Name)
			}
		}
	}
}

// TestCheckRolesStatusRoundTrip checks the checker: the identity passes, and a
// conversion that loses one field is reported, naming it.
func TestCheckRolesStatusRoundTrip(t *testing.T) {
	if err := checkRolesStatusRoundTrip(func(s ownedpods.Status) ownedpods.Status { return s }); err != nil {
		t.Fatalf("the identity: %v", err)
	}
	tests := []struct {
		name      string
		lose      func(s *ownedpods.Status)
		wantField string
	}{
		{"restarts", func(s *ownedpods.Status) { s.Restarts = 0 }, "restarts lost"},
		{"restarts counted", func(s *ownedpods.Status) { s.RestartsCountTowardsMax = 0 }, "restartsCountTowardsMax lost"},
		{"observed generation", func(s *ownedpods.Status) {
			for i := range s.Conditions {
				s.Conditions[i].ObservedGeneration = 0
			}
		}, "conditions lost"},
		{"terminal state", func(s *ownedpods.Status) { s.TerminalState = "" }, "terminalState lost"},
		{"a role", func(s *ownedpods.Status) {
			if len(s.Roles) > 1 {
				s.Roles = s.Roles[:1]
			}
		}, "roles lost: wrote 2, read back 1"},
		{"the role order", func(s *ownedpods.Status) {
			if len(s.Roles) == 2 {
				s.Roles[0], s.Roles[1] = s.Roles[1], s.Roles[0]
			}
		}, "roles[0].name lost"},
		{"attempt", func(s *ownedpods.Status) {
			for i := range s.Roles {
				s.Roles[i].Attempt = 0
			}
		}, "roles[0].attempt lost"},
		{"the role's total", func(s *ownedpods.Status) {
			for i := range s.Roles {
				s.Roles[i].Failed = 0
			}
		}, "roles[0].failed lost"},
		{"the role's own failures", func(s *ownedpods.Status) {
			for i := range s.Roles {
				s.Roles[i].FailedOnTheirOwn = 0
			}
		}, "roles[0].failedOnTheirOwn lost"},
		{"ready", func(s *ownedpods.Status) {
			for i := range s.Roles {
				s.Roles[i].Job.Ready = nil
			}
		}, "roles[0].job.ready lost"},
		{"lastProbeTime", func(s *ownedpods.Status) {
			for i := range s.Roles {
				for j := range s.Roles[i].Job.Conditions {
					s.Roles[i].Job.Conditions[j].LastProbeTime = metav1.Time{}
				}
			}
		}, "job.conditions lost"},
		{"uncounted", func(s *ownedpods.Status) {
			for i := range s.Roles {
				s.Roles[i].Job.UncountedTerminatedPods = nil
			}
		}, "roles[0].job.uncountedTerminatedPods lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRolesStatusRoundTrip(func(s ownedpods.Status) ownedpods.Status {
				tt.lose(&s)
				return s
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("checkRolesStatusRoundTrip() = %v, want an error naming %q", err, tt.wantField)
			}
		})
	}
	// The conversion receives a copy: changing what it was given is a loss too.
	err := checkRolesStatusRoundTrip(func(s ownedpods.Status) ownedpods.Status {
		for i := range s.Roles {
			if s.Roles[i].Job.Ready != nil {
				*s.Roles[i].Job.Ready = 42
			}
		}
		return s
	})
	if err == nil || !strings.Contains(err.Error(), "job.ready lost") {
		t.Errorf("checkRolesStatusRoundTrip() of a conversion changing its input = %v, want job.ready lost", err)
	}
}
