package runplan_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/jobkit/jobkit/singlepod/podoutcome"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

var pods = schema.GroupResource{Resource: "pods"}

func TestClassifyCreateError(t *testing.T) {
	byCode := func(code int) error {
		return apierrors.NewGenericServerResponse(code, "POST", pods, "run-1", "", 0, false)
	}
	withoutCode := func(reason metav1.StatusReason) error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: reason}}
	}
	const (
		retry    = runplan.CreateErrorRetry
		exists   = runplan.CreateErrorExists
		terminal = runplan.CreateErrorTerminal
	)
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantJobkit runplan.CreateErrorClass
		wantPlank  runplan.CreateErrorClass
	}{
		{name: "nil", err: nil, wantJobkit: runplan.CreateErrorNone, wantPlank: runplan.CreateErrorNone},
		{name: "network error", err: errors.New("connection refused"), wantJobkit: retry, wantPlank: retry},
		{name: "cancelled context", err: fmt.Errorf("create: %w", context.Canceled), wantJobkit: retry, wantPlank: retry},
		{name: "400 bad request", err: apierrors.NewBadRequest("no containers"), wantCode: 400, wantJobkit: terminal, wantPlank: terminal},
		{name: "401 unauthorized", err: apierrors.NewUnauthorized("token expired"), wantCode: 401, wantJobkit: terminal, wantPlank: terminal},
		{name: "403 quota", err: apierrors.NewForbidden(pods, "run-1", errors.New("exceeded quota")), wantCode: 403, wantJobkit: terminal, wantPlank: terminal},
		{name: "404 not found", err: apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ci"), wantCode: 404, wantJobkit: retry, wantPlank: terminal},
		{name: "409 already exists", err: apierrors.NewAlreadyExists(pods, "run-1"), wantCode: 409, wantJobkit: exists, wantPlank: terminal},
		{name: "409 already exists wrapped", err: fmt.Errorf("creating: %w", apierrors.NewAlreadyExists(pods, "run-1")), wantCode: 409, wantJobkit: exists, wantPlank: terminal},
		{name: "409 conflict", err: apierrors.NewConflict(pods, "run-1", errors.New("modified")), wantCode: 409, wantJobkit: retry, wantPlank: terminal},
		{name: "410 gone", err: goneError(), wantCode: 410, wantJobkit: terminal, wantPlank: terminal},
		{name: "418 any other 4xx", err: byCode(418), wantCode: 418, wantJobkit: terminal, wantPlank: terminal},
		{name: "422 invalid", err: apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "run-1", nil), wantCode: 422, wantJobkit: terminal, wantPlank: terminal},
		{name: "429 throttled", err: apierrors.NewTooManyRequests("slow down", 1), wantCode: 429, wantJobkit: retry, wantPlank: terminal},
		{name: "500 internal", err: apierrors.NewInternalError(errors.New("etcd")), wantCode: 500, wantJobkit: retry, wantPlank: retry},
		{name: "503 unavailable", err: apierrors.NewServiceUnavailable("shutting down"), wantCode: 503, wantJobkit: retry, wantPlank: retry},
		{name: "no code, reason AlreadyExists", err: withoutCode(metav1.StatusReasonAlreadyExists), wantCode: 409, wantJobkit: exists, wantPlank: terminal},
		{name: "no code, reason Invalid", err: withoutCode(metav1.StatusReasonInvalid), wantCode: 422, wantJobkit: terminal, wantPlank: terminal},
		{name: "no code, reason Timeout", err: withoutCode(metav1.StatusReasonTimeout), wantCode: 504, wantJobkit: retry, wantPlank: retry},
		{name: "no code, unknown reason", err: withoutCode(metav1.StatusReasonUnknown), wantJobkit: retry, wantPlank: retry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				policy runplan.CreateErrorPolicy
				want   runplan.CreateErrorClass
			}{{runplan.CreateErrorsJobkit, tt.wantJobkit}, {runplan.CreateErrorsPlank, tt.wantPlank}} {
				got := runplan.ClassifyCreateError(tt.err, c.policy, runplan.FixedName)
				if got.Class != c.want || got.Code != tt.wantCode || got.Why == "" {
					t.Errorf("ClassifyCreateError(%v, %q) = %+v, want class %s, code %d and a why", tt.err, c.policy, got, c.want, tt.wantCode)
				}
			}
		})
	}
}

// The naming decides only what a 409 AlreadyExists means, and only under
// CreateErrorsJobkit: the pod of a fixed name is adopted, a generated name that was
// taken is retried (a reconcile.Reconciler's NonIndexed pods; before issue 33,
// reconcile's own classification answered Retry for both namings).
func TestClassifyCreateErrorNaming(t *testing.T) {
	exists := apierrors.NewAlreadyExists(pods, "run-1")
	tests := []struct {
		name   string
		err    error
		policy runplan.CreateErrorPolicy
		naming runplan.PodNaming
		want   runplan.CreateErrorClass
	}{
		{name: "jobkit, fixed name: adopt", err: exists, naming: runplan.FixedName, want: runplan.CreateErrorExists},
		{name: "jobkit, generated name: retry", err: exists, naming: runplan.GeneratedName, want: runplan.CreateErrorRetry},
		{name: "jobkit, generated name, wrapped: retry", err: fmt.Errorf("create: %w", exists), naming: runplan.GeneratedName, want: runplan.CreateErrorRetry},
		{name: "jobkit, generated name, no code: retry", err: &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonAlreadyExists}}, naming: runplan.GeneratedName, want: runplan.CreateErrorRetry},
		{name: "plank, fixed name: terminal", err: exists, policy: runplan.CreateErrorsPlank, naming: runplan.FixedName, want: runplan.CreateErrorTerminal},
		{name: "plank, generated name: terminal", err: exists, policy: runplan.CreateErrorsPlank, naming: runplan.GeneratedName, want: runplan.CreateErrorTerminal},
		{name: "jobkit, generated name, 409 conflict: retry", err: apierrors.NewConflict(pods, "run-1", errors.New("modified")), naming: runplan.GeneratedName, want: runplan.CreateErrorRetry},
		{name: "jobkit, generated name, 422: terminal", err: apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "run-1", nil), naming: runplan.GeneratedName, want: runplan.CreateErrorTerminal},
		{name: "jobkit, generated name, nil", err: nil, naming: runplan.GeneratedName, want: runplan.CreateErrorNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runplan.ClassifyCreateError(tt.err, tt.policy, tt.naming)
			if got.Class != tt.want || got.Why == "" {
				t.Errorf("ClassifyCreateError(%v, %q, %d) = %+v, want class %s and a why", tt.err, tt.policy, tt.naming, got, tt.want)
			}
		})
	}
}

func TestPlanCreateFailed(t *testing.T) {
	created := runplan.Plan{Action: runplan.ActionCreate, Reason: "Start", StartTime: now,
		Supersede: []runplan.Supersession{{UID: "old", Name: "old", Description: "Superseded by a newer run run-1."}},
		Status:    pendingStart, Pod: runplan.PodEffects{Create: true}}
	plank := created
	plank.CreateErrors = runplan.CreateErrorsPlank
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "run-1", nil)
	exists := apierrors.NewAlreadyExists(pods, "run-1")
	// The plans that follow have no StartTime and no Supersede: done by then.
	tests := []struct {
		name  string
		plank string
		plan  runplan.Plan
		err   error
		want  runplan.Plan
	}{
		{name: "no error: the plan itself", plan: created, err: nil, want: created},
		{
			name:  "refused: error with plank's description",
			plank: "a 4xx sets state error, completes the job, Pod can not be created: <err>",
			plan:  created, err: invalid,
			want: runplan.Plan{Action: runplan.ActionFinish, Reason: "CreateRefused",
				Status: runplan.Status{State: runplan.StateError, Description: "Pod can not be created: " + invalid.Error(), Complete: true}},
		},
		{
			name:  "already exists: wait for the cache, then adopt",
			plank: "differs: plank errors the job on a 409",
			plan:  created, err: exists,
			want: runplan.Plan{Action: runplan.ActionWait, Reason: "CreateExists", RequeueAfter: time.Second},
		},
		{
			name:  "already exists under plank's policy: error",
			plank: "a 4xx sets state error",
			plan:  plank, err: exists,
			want: runplan.Plan{Action: runplan.ActionFinish, Reason: "CreateRefused",
				CreateErrors: runplan.CreateErrorsPlank,
				Status:       runplan.Status{State: runplan.StateError, Description: "Pod can not be created: " + exists.Error(), Complete: true}},
		},
		{
			name:  "server error: back off",
			plank: "any other error is returned, the job stays triggered",
			plan:  created, err: apierrors.NewInternalError(errors.New("etcd")),
			want: runplan.Plan{Action: runplan.ActionBackoff, Reason: "CreateFailed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.plan.CreateFailed(tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CreateFailed(%v) (-want +got), plank: %s\n%s", tt.err, tt.plank, diff)
			}
		})
	}
}

func TestPlanString(t *testing.T) {
	tests := []struct {
		name string
		plan runplan.Plan
		want string
	}{
		{name: "wait", plan: runplan.Plan{Action: runplan.ActionWait, Reason: "Running", RequeueAfter: time.Hour}, want: "Wait(Running) requeue=1h0m0s"},
		{
			name: "finish",
			plan: finished(runplan.StateError, "PendingTimeout", "Pod pending timeout.", runplan.PodEffects{Delete: true, UID: podUID}),
			want: `Finish(PendingTimeout) state=error delete-pod complete "Pod pending timeout."`,
		},
		{
			name: "revive",
			plan: runplan.Plan{Action: runplan.ActionRevive, Reason: "Evicted", StartTime: now,
				Supersede: []runplan.Supersession{{Name: "old"}},
				Status:    runplan.Status{Revivals: &podoutcome.Revivals{Count: 2}},
				Pod:       runplan.PodEffects{Terminating: true, ReleaseFinalizers: true}},
			want: "Revive(Evicted) start supersede=old revivals=2 pod-terminating release-finalizers",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.plan.String(); got != tt.want {
				t.Errorf("Plan.String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// goneError is a 410 Gone answer (reason Gone), as apierrors.NewGone built it before
// it was deprecated: the classification of that status is what is tested.
func goneError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusGone, Reason: metav1.StatusReasonGone, Message: "gone",
	}}
}
