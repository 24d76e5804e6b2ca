package runplan_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/jobkit/jobkit/singlepod/runplan"
)

// Every status a create may be answered with, under CreateErrorsJobkit: the table
// of reconcile.ClassifyCreateError, which this classification replaced (issue 33).
// Its answers are those of a generated name; a fixed name differs only for 409
// AlreadyExists, which it adopts.
func TestClassifyCreateErrorByStatus(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "job-1",
		field.ErrorList{field.Invalid(field.NewPath("spec", "containers").Index(0).Child("name"), "Bad_Name", "must be a DNS label")})
	quota := apierrors.NewForbidden(pods, "job-1", errors.New("exceeded quota: compute, requested: cpu=1, used: cpu=4, limited: cpu=4"))
	withoutCode := func(reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: reason}}
	}
	tests := []struct {
		name string
		err  error
		want runplan.CreateErrorClass
	}{
		{name: "nil", err: nil, want: runplan.CreateErrorNone},

		// 4xx: the request itself is wrong, the job errors.
		{name: "400 bad request", err: apierrors.NewBadRequest("no containers"), want: runplan.CreateErrorTerminal},
		{name: "401 unauthorized", err: apierrors.NewUnauthorized("token expired"), want: runplan.CreateErrorTerminal},
		{name: "403 forbidden", err: apierrors.NewForbidden(pods, "job-1", errors.New("pod security")), want: runplan.CreateErrorTerminal},
		{name: "403 exceeded quota", err: quota, want: runplan.CreateErrorTerminal},
		{name: "405 method not supported", err: apierrors.NewMethodNotSupported(pods, "create"), want: runplan.CreateErrorTerminal},
		{name: "410 gone", err: goneError(), want: runplan.CreateErrorTerminal},
		{name: "410 resource expired", err: apierrors.NewResourceExpired("expired"), want: runplan.CreateErrorTerminal},
		{name: "413 request entity too large", err: apierrors.NewRequestEntityTooLargeError("limit is 3MB"), want: runplan.CreateErrorTerminal},
		{name: "415 unsupported media type", err: apierrors.NewGenericServerResponse(415, "POST", pods, "job-1", "", 0, false), want: runplan.CreateErrorTerminal},
		{name: "418 any other 4xx", err: apierrors.NewGenericServerResponse(418, "POST", pods, "job-1", "", 0, false), want: runplan.CreateErrorTerminal},
		{name: "422 invalid", err: invalid, want: runplan.CreateErrorTerminal},
		{name: "422 invalid wrapped", err: fmt.Errorf("creating pod default/job-1: %w", invalid), want: runplan.CreateErrorTerminal},
		{name: "499 last 4xx", err: apierrors.NewGenericServerResponse(499, "POST", pods, "job-1", "", 0, false), want: runplan.CreateErrorTerminal},

		// 4xx exceptions: may succeed later.
		{name: "404 not found (namespace not in cache yet)", err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ci"), want: runplan.CreateErrorRetry},
		{name: "409 already exists", err: apierrors.NewAlreadyExists(pods, "job-1"), want: runplan.CreateErrorRetry},
		{name: "409 conflict", err: apierrors.NewConflict(pods, "job-1", errors.New("the object has been modified")), want: runplan.CreateErrorRetry},
		{name: "429 too many requests", err: apierrors.NewTooManyRequests("slow down", 1), want: runplan.CreateErrorRetry},
		{name: "429 wrapped", err: fmt.Errorf("create: %w", apierrors.NewTooManyRequestsError("admission webhook throttled")), want: runplan.CreateErrorRetry},

		// 5xx and everything without an API status: retried.
		{name: "500 internal error", err: apierrors.NewInternalError(errors.New("etcd leader changed")), want: runplan.CreateErrorRetry},
		{name: "500 server timeout", err: apierrors.NewServerTimeout(pods, "create", 1), want: runplan.CreateErrorRetry},
		{name: "503 service unavailable", err: apierrors.NewServiceUnavailable("apiserver shutting down"), want: runplan.CreateErrorRetry},
		{name: "504 timeout", err: apierrors.NewTimeoutError("request timed out", 1), want: runplan.CreateErrorRetry},
		{name: "3xx is not a 4xx", err: apierrors.NewGenericServerResponse(302, "POST", pods, "job-1", "", 0, false), want: runplan.CreateErrorRetry},
		{name: "600 out of range", err: apierrors.NewGenericServerResponse(600, "POST", pods, "job-1", "", 0, false), want: runplan.CreateErrorRetry},
		{name: "network error", err: &url.Error{Op: "Post", URL: "https://10.0.0.1/api/v1/namespaces/default/pods", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}, want: runplan.CreateErrorRetry},
		{name: "context deadline", err: context.DeadlineExceeded, want: runplan.CreateErrorRetry},
		{name: "plain error", err: errors.New("webhook call failed"), want: runplan.CreateErrorRetry},

		// A status built by hand without a code: judged by its reason.
		{name: "no code, reason Invalid", err: withoutCode(metav1.StatusReasonInvalid), want: runplan.CreateErrorTerminal},
		{name: "no code, reason BadRequest", err: withoutCode(metav1.StatusReasonBadRequest), want: runplan.CreateErrorTerminal},
		{name: "no code, reason Forbidden", err: withoutCode(metav1.StatusReasonForbidden), want: runplan.CreateErrorTerminal},
		{name: "no code, reason Unauthorized", err: withoutCode(metav1.StatusReasonUnauthorized), want: runplan.CreateErrorTerminal},
		{name: "no code, reason Gone", err: withoutCode(metav1.StatusReasonGone), want: runplan.CreateErrorTerminal},
		{name: "no code, reason Expired", err: withoutCode(metav1.StatusReasonExpired), want: runplan.CreateErrorTerminal},
		{name: "no code, reason MethodNotAllowed", err: withoutCode(metav1.StatusReasonMethodNotAllowed), want: runplan.CreateErrorTerminal},
		{name: "no code, reason NotAcceptable", err: withoutCode(metav1.StatusReasonNotAcceptable), want: runplan.CreateErrorTerminal},
		{name: "no code, reason RequestEntityTooLarge", err: withoutCode(metav1.StatusReasonRequestEntityTooLarge), want: runplan.CreateErrorTerminal},
		{name: "no code, reason UnsupportedMediaType", err: withoutCode(metav1.StatusReasonUnsupportedMediaType), want: runplan.CreateErrorTerminal},
		{name: "no code, reason NotFound", err: withoutCode(metav1.StatusReasonNotFound), want: runplan.CreateErrorRetry},
		{name: "no code, reason AlreadyExists", err: withoutCode(metav1.StatusReasonAlreadyExists), want: runplan.CreateErrorRetry},
		{name: "no code, reason Conflict", err: withoutCode(metav1.StatusReasonConflict), want: runplan.CreateErrorRetry},
		{name: "no code, reason TooManyRequests", err: withoutCode(metav1.StatusReasonTooManyRequests), want: runplan.CreateErrorRetry},
		{name: "no code, reason InternalError", err: withoutCode(metav1.StatusReasonInternalError), want: runplan.CreateErrorRetry},
		{name: "no code, reason ServerTimeout", err: withoutCode(metav1.StatusReasonServerTimeout), want: runplan.CreateErrorRetry},
		{name: "no code, reason ServiceUnavailable", err: withoutCode(metav1.StatusReasonServiceUnavailable), want: runplan.CreateErrorRetry},
		{name: "no code, reason Timeout", err: withoutCode(metav1.StatusReasonTimeout), want: runplan.CreateErrorRetry},
		{name: "no code, reason Unknown", err: withoutCode(metav1.StatusReasonUnknown), want: runplan.CreateErrorRetry},
		{name: "no code, no reason", err: withoutCode(""), want: runplan.CreateErrorRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runplan.ClassifyCreateError(tt.err, runplan.CreateErrorsJobkit, runplan.GeneratedName); got.Class != tt.want {
				t.Errorf("ClassifyCreateError(%v, GeneratedName) = %+v, want %s", tt.err, got, tt.want)
			}
			want := tt.want
			if apierrors.IsAlreadyExists(tt.err) {
				want = runplan.CreateErrorExists
			}
			if got := runplan.ClassifyCreateError(tt.err, runplan.CreateErrorsJobkit, runplan.FixedName); got.Class != want {
				t.Errorf("ClassifyCreateError(%v, FixedName) = %+v, want %s", tt.err, got, want)
			}
		})
	}
}

func BenchmarkClassifyCreateError(b *testing.B) {
	errs := []error{
		fmt.Errorf("creating pod: %w", apierrors.NewBadRequest("bad")),
		apierrors.NewConflict(pods, "p", errors.New("x")),
		errors.New("connection refused"),
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range errs {
			runplan.ClassifyCreateError(err, runplan.CreateErrorsJobkit, runplan.GeneratedName)
		}
	}
}
