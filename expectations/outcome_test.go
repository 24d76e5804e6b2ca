package expectations_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/expectations"
)

func TestOutcomeUnknown(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "client timeout", err: apierrors.NewTimeoutError("request timed out", 1), want: true},
		{name: "server timeout", err: apierrors.NewServerTimeout(pods, "create", 1), want: true},
		{name: "connection reset", err: errors.New("read tcp: connection reset by peer"), want: true},
		{name: "EOF, wrapped", err: fmt.Errorf("post pods: %w", io.ErrUnexpectedEOF), want: true},
		{name: "context deadline", err: context.DeadlineExceeded, want: true},
		{name: "timeout wrapped", err: fmt.Errorf("create: %w", apierrors.NewTimeoutError("x", 0)), want: true},
		{name: "already exists", err: apierrors.NewAlreadyExists(pods, "p"), want: false},
		{name: "conflict", err: apierrors.NewConflict(pods, "p", errors.New("changed")), want: false},
		{name: "invalid", err: apierrors.NewBadRequest("bad"), want: false},
		{name: "forbidden", err: apierrors.NewForbidden(pods, "p", errors.New("quota")), want: false},
		{name: "not found", err: apierrors.NewNotFound(pods, "p"), want: false},
		{name: "throttled", err: apierrors.NewTooManyRequests("slow down", 1), want: false},
		{name: "internal error", err: apierrors.NewInternalError(errors.New("boom")), want: false},
		{name: "internal error, wrapped", err: fmt.Errorf("sync: %w", apierrors.NewInternalError(errors.New("boom"))), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expectations.OutcomeUnknown(tt.err); got != tt.want {
				t.Errorf("OutcomeUnknown(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// A controller following the rule: a create whose outcome is unknown stays expected,
// one that surely failed is given back.
func ExampleOutcomeUnknown() {
	e, _ := expectations.New[string](expectations.Config{})
	create := func(err error) {
		_ = e.RaiseCreations("ns/job", 1)
		if err != nil && !expectations.OutcomeUnknown(err) {
			e.CreationObserved("ns/job") // surely not created
		}
	}
	create(apierrors.NewBadRequest("invalid pod"))
	fmt.Println("after a refused create:", e.Satisfied("ns/job"))
	create(apierrors.NewTimeoutError("timed out", 0))
	fmt.Println("after a timed-out create:", e.Satisfied("ns/job"))
	// Output:
	// after a refused create: true
	// after a timed-out create: false
}
