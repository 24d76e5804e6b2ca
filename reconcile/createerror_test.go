package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/jobkit/jobkit/reconcile"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

var createErrorPods = schema.GroupResource{Resource: "pods"}

func TestClassifyCreateError(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "job-1",
		field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(0).Child("name"), "Bad_Name", "must be a DNS label")})
	quota := apierrors.NewForbidden(createErrorPods, "job-1", errors.New("exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4"))
	withoutCode := func(reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: reason}}
	}
	tests := []struct {
		name string
		err  error
		want reconcile.CreateErrorClass
	}{
		{name: "nil", err: nil, want: reconcile.CreateErrorNone},

		// 4xx: the request itself is wrong, the job errors.
		{name: "400 bad request", err: apierrors.NewBadRequest("no containers"), want: reconcile.CreateErrorTerminal},
		{name: "401 unauthorized", err: apierrors.NewUnauthorized("token expired"), want: reconcile.CreateErrorTerminal},
		{name: "403 forbidden", err: apierrors.NewForbidden(createErrorPods, "job-1", errors.New("pod security")), want: reconcile.CreateErrorTerminal},
		{name: "403 exceeded quota", err: quota, want: reconcile.CreateErrorTerminal},
		{name: "405 method not supported", err: apierrors.NewMethodNotSupported(createErrorPods, "create"), want: reconcile.CreateErrorTerminal},
		{name: "410 gone", err: goneError(), want: reconcile.CreateErrorTerminal},
		{name: "410 resource expired", err: apierrors.NewResourceExpired("expired"), want: reconcile.CreateErrorTerminal},
		{name: "413 request entity too large", err: apierrors.NewRequestEntityTooLargeError("limit is 3MB"), want: reconcile.CreateErrorTerminal},
		{name: "415 unsupported media type", err: apierrors.NewGenericServerResponse(415, "POST", createErrorPods, "job-1", "", 0, false), want: reconcile.CreateErrorTerminal},
		{name: "418 any other 4xx", err: apierrors.NewGenericServerResponse(418, "POST", createErrorPods, "job-1", "", 0, false), want: reconcile.CreateErrorTerminal},
		{name: "422 invalid", err: invalid, want: reconcile.CreateErrorTerminal},
		{name: "422 invalid wrapped", err: fmt.Errorf("creating pod default/job-1: %w", invalid), want: reconcile.CreateErrorTerminal},
		{name: "499 last 4xx", err: apierrors.NewGenericServerResponse(499, "POST", createErrorPods, "job-1", "", 0, false), want: reconcile.CreateErrorTerminal},

		// 4xx exceptions: may succeed later.
		{name: "404 not found (namespace not in cache yet)", err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ci"), want: reconcile.CreateErrorRetry},
		{name: "409 already exists", err: apierrors.NewAlreadyExists(createErrorPods, "job-1"), want: reconcile.CreateErrorRetry},
		{name: "409 conflict", err: apierrors.NewConflict(createErrorPods, "job-1", errors.New("the object has been modified")), want: reconcile.CreateErrorRetry},
		{name: "429 too many requests", err: apierrors.NewTooManyRequests("slow down", 1), want: reconcile.CreateErrorRetry},
		{name: "429 wrapped", err: fmt.Errorf("create: %w", apierrors.NewTooManyRequestsError("admission webhook throttled")), want: reconcile.CreateErrorRetry},

		// 5xx and everything without an API status: retried.
		{name: "500 internal error", err: apierrors.NewInternalError(errors.New("etcd leader changed")), want: reconcile.CreateErrorRetry},
		{name: "500 server timeout", err: apierrors.NewServerTimeout(createErrorPods, "create", 1), want: reconcile.CreateErrorRetry},
		{name: "503 service unavailable", err: apierrors.NewServiceUnavailable("apiserver shutting down"), want: reconcile.CreateErrorRetry},
		{name: "504 timeout", err: apierrors.NewTimeoutError("request timed out", 1), want: reconcile.CreateErrorRetry},
		{name: "3xx is not a 4xx", err: apierrors.NewGenericServerResponse(302, "POST", createErrorPods, "job-1", "", 0, false), want: reconcile.CreateErrorRetry},
		{name: "600 out of range", err: apierrors.NewGenericServerResponse(600, "POST", createErrorPods, "job-1", "", 0, false), want: reconcile.CreateErrorRetry},
		{name: "network error", err: &url.Error{Op: "Post", URL: "https://10.0.0.1/api/v1/namespaces/default/pods", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}, want: reconcile.CreateErrorRetry},
		{name: "context deadline", err: context.DeadlineExceeded, want: reconcile.CreateErrorRetry},
		{name: "plain error", err: errors.New("webhook call failed"), want: reconcile.CreateErrorRetry},

		// A status built by hand without a code: judged by its reason.
		{name: "no code, reason Invalid", err: withoutCode(metav1.StatusReasonInvalid), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason BadRequest", err: withoutCode(metav1.StatusReasonBadRequest), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason Forbidden", err: withoutCode(metav1.StatusReasonForbidden), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason Unauthorized", err: withoutCode(metav1.StatusReasonUnauthorized), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason Gone", err: withoutCode(metav1.StatusReasonGone), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason Expired", err: withoutCode(metav1.StatusReasonExpired), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason MethodNotAllowed", err: withoutCode(metav1.StatusReasonMethodNotAllowed), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason NotAcceptable", err: withoutCode(metav1.StatusReasonNotAcceptable), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason RequestEntityTooLarge", err: withoutCode(metav1.StatusReasonRequestEntityTooLarge), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason UnsupportedMediaType", err: withoutCode(metav1.StatusReasonUnsupportedMediaType), want: reconcile.CreateErrorTerminal},
		{name: "no code, reason NotFound", err: withoutCode(metav1.StatusReasonNotFound), want: reconcile.CreateErrorRetry},
		{name: "no code, reason AlreadyExists", err: withoutCode(metav1.StatusReasonAlreadyExists), want: reconcile.CreateErrorRetry},
		{name: "no code, reason Conflict", err: withoutCode(metav1.StatusReasonConflict), want: reconcile.CreateErrorRetry},
		{name: "no code, reason TooManyRequests", err: withoutCode(metav1.StatusReasonTooManyRequests), want: reconcile.CreateErrorRetry},
		{name: "no code, reason InternalError", err: withoutCode(metav1.StatusReasonInternalError), want: reconcile.CreateErrorRetry},
		{name: "no code, reason ServerTimeout", err: withoutCode(metav1.StatusReasonServerTimeout), want: reconcile.CreateErrorRetry},
		{name: "no code, reason ServiceUnavailable", err: withoutCode(metav1.StatusReasonServiceUnavailable), want: reconcile.CreateErrorRetry},
		{name: "no code, reason Timeout", err: withoutCode(metav1.StatusReasonTimeout), want: reconcile.CreateErrorRetry},
		{name: "no code, reason Unknown", err: withoutCode(metav1.StatusReasonUnknown), want: reconcile.CreateErrorRetry},
		{name: "no code, no reason", err: withoutCode(""), want: reconcile.CreateErrorRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reconcile.ClassifyCreateError(tt.err, runplan.CreateErrorsJobkit); got != tt.want {
				t.Errorf("ClassifyCreateError(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if got, want := reconcile.IsTerminalCreateError(tt.err), tt.want == reconcile.CreateErrorTerminal; got != want {
				t.Errorf("IsTerminalCreateError(%v) = %v, want %v", tt.err, got, want)
			}
		})
	}
}

func TestClassifyCreateErrorPolicy(t *testing.T) {
	exists := apierrors.NewAlreadyExists(createErrorPods, "job-1")
	tests := []struct {
		name   string
		err    error
		policy runplan.CreateErrorPolicy
		want   reconcile.CreateErrorClass
	}{
		{name: "jobkit: 409 already exists is retried (and adopted)", err: exists, policy: runplan.CreateErrorsJobkit, want: reconcile.CreateErrorRetry},
		{name: "plank: 409 already exists is terminal", err: exists, policy: runplan.CreateErrorsPlank, want: reconcile.CreateErrorTerminal},
		{name: "plank: 404 is terminal", err: apierrors.NewNotFound(createErrorPods, "job-1"), policy: runplan.CreateErrorsPlank, want: reconcile.CreateErrorTerminal},
		{name: "plank: 429 is terminal", err: apierrors.NewTooManyRequests("slow down", 1), policy: runplan.CreateErrorsPlank, want: reconcile.CreateErrorTerminal},
		{name: "plank: 500 is retried", err: apierrors.NewInternalError(errors.New("etcd")), policy: runplan.CreateErrorsPlank, want: reconcile.CreateErrorRetry},
		{name: "plank: nil", err: nil, policy: runplan.CreateErrorsPlank, want: reconcile.CreateErrorNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reconcile.ClassifyCreateError(tt.err, tt.policy); got != tt.want {
				t.Errorf("ClassifyCreateError(%v, %q) = %v, want %v", tt.err, tt.policy, got, tt.want)
			}
		})
	}
}

func TestCreateErrorClassString(t *testing.T) {
	tests := []struct {
		class reconcile.CreateErrorClass
		want  string
	}{
		{reconcile.CreateErrorNone, "None"},
		{reconcile.CreateErrorRetry, "Retry"},
		{reconcile.CreateErrorTerminal, "Terminal"},
		{reconcile.CreateErrorClass(7), "CreateErrorClass(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.class.String(); got != tt.want {
				t.Errorf("CreateErrorClass(%d).String() = %q, want %q", int(tt.class), got, tt.want)
			}
		})
	}
}

func TestCreateErrorMessage(t *testing.T) {
	err := apierrors.NewBadRequest("no containers")
	if got, want := reconcile.CreateErrorMessage(err), "Pod can not be created: no containers"; got != want {
		t.Errorf("CreateErrorMessage(%v) = %q, want %q", err, got, want)
	}
}

func ExampleClassifyCreateError() {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "job-1", field.ErrorList{
		field.Required(field.NewPath("spec", "containers"), ""),
	})
	for _, err := range []error{
		nil,
		invalid,
		apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, "job-1"),
		apierrors.NewTooManyRequests("slow down", 1),
		apierrors.NewServiceUnavailable("apiserver shutting down"),
	} {
		class := reconcile.ClassifyCreateError(err, runplan.CreateErrorsJobkit)
		fmt.Println(class)
		if class == reconcile.CreateErrorTerminal {
			fmt.Println(reconcile.CreateErrorMessage(err))
		}
	}
	// Output:
	// None
	// Terminal
	// Pod can not be created: Pod "job-1" is invalid: spec.containers: Required value
	// Retry
	// Retry
	// Retry
}

func BenchmarkClassifyCreateError(b *testing.B) {
	errs := []error{
		fmt.Errorf("creating pod: %w", apierrors.NewBadRequest("bad")),
		apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("x")),
		errors.New("connection refused"),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range errs {
			reconcile.ClassifyCreateError(err, runplan.CreateErrorsJobkit)
		}
	}
}

// goneError is a 410 Gone answer (reason Gone), as apierrors.NewGone built it before
// it was deprecated: the classification of that status is what is tested.
func goneError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone, Message: "gone",
	}}
}
