package envtesting

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestInvalidCause(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"}, "js", field.ErrorList{
		field.Invalid(field.NewPath("spec", "replicatedJobs").Index(1).Child("replicas"), -1, "should be greater than or equal to 0"),
		field.Duplicate(field.NewPath("spec", "replicatedJobs").Index(1), "leader"),
	})
	tests := []struct {
		name    string
		err     error
		field   string
		msg     string
		within  bool
		wantErr string // empty: a match
	}{
		{name: "exact field and message", err: invalid, field: "spec.replicatedJobs[1].replicas", msg: "greater than or equal to 0"},
		{name: "second cause", err: invalid, field: "spec.replicatedJobs[1]", msg: "Duplicate value"},
		{name: "exact refuses a parent field", err: invalid, field: "spec.replicatedJobs", msg: "Duplicate value",
			wantErr: `want a cause on field spec.replicatedJobs containing "Duplicate value"; causes: [spec.replicatedJobs[1].replicas: `},
		{name: "within takes a parent field", err: invalid, field: "spec.replicatedJobs", msg: "Duplicate value", within: true},
		{name: "wrong message", err: invalid, field: "spec.replicatedJobs[1].replicas", msg: "immutable", wantErr: `containing "immutable"`},
		{name: "accepted", err: nil, field: "spec.workers", msg: "x", wantErr: `accepted; want Invalid on spec.workers ("x")`},
		{name: "not Invalid", err: apierrors.NewConflict(schema.GroupResource{Resource: "jobsets"}, "js", errors.New("changed")),
			field: "spec", msg: "x", wantErr: "want Invalid on spec"},
		{name: "not an API error", err: errors.New("connection refused"), field: "spec", msg: "x",
			wantErr: "error = connection refused, want Invalid on spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			match := fieldIs
			if tt.within {
				match = strings.Contains
			}
			err := invalidCause(tt.err, tt.field, tt.msg, match)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("invalidCause(%v, %q, %q) = %v, want nil", tt.err, tt.field, tt.msg, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("invalidCause(%v, %q, %q) = %v, want an error containing %q", tt.err, tt.field, tt.msg, err, tt.wantErr)
			}
		})
	}
}

func TestObjectName(t *testing.T) {
	tests := []struct {
		name     string
		testName string
		max      int
		want     string
	}{
		{name: "subtest", testName: "TestSpecRefused/bad_role_name", max: 63, want: "testspecrefused-bad-role-name"},
		{name: "digits kept", testName: "TestX/case_2", max: 63, want: "testx-case-2"},
		{name: "long name keeps its end", testName: "TestStatusWrites/completionTime_before_startTime", max: 20, want: "ime-before-starttime"},
		{name: "no dash at the ends", testName: "TestX/(a)_", max: 63, want: "testx--a"},
		{name: "cut at a dash", testName: "TestA/x_long", max: 5, want: "long"},
		{name: "no bound", testName: "TestA/B", max: 0, want: "testa-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ObjectName(tt.testName, tt.max); got != tt.want {
				t.Errorf("ObjectName(%q, %d) = %q, want %q", tt.testName, tt.max, got, tt.want)
			}
		})
	}
}
