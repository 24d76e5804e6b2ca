package reconcile

import (
	"errors"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestUIDChanged(t *testing.T) {
	invalid := func(path *field.Path) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "child", field.ErrorList{field.Invalid(path, "x", "field is immutable")})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "Invalid on metadata.uid", err: invalid(field.NewPath("metadata", "uid")), want: true},
		{name: "Invalid on another field", err: invalid(field.NewPath("spec", "suspend"))},
		{name: "Conflict", err: apierrors.NewConflict(batchv1.Resource("jobs"), "child", errors.New("x"))},
		{name: "wrapped", err: fmt.Errorf("patching: %w", invalid(field.NewPath("metadata", "uid"))), want: true},
		{name: "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := uidChanged(tt.err); got != tt.want {
				t.Errorf("uidChanged(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}
