package runplan

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateErrorPolicy selects how a failed pod create is classified.
type CreateErrorPolicy string

// The policies.
const (
	// CreateErrorsJobkit (the zero value) retries what may succeed later and
	// adopts a pod that already exists; see ClassifyCreateError.
	CreateErrorsJobkit CreateErrorPolicy = ""
	// CreateErrorsPlank is Prow plank's rule: every 4xx answer errors the
	// run, 409 AlreadyExists, 404 and 429 included; everything else is
	// retried.
	CreateErrorsPlank CreateErrorPolicy = "Plank"
)

// PodNaming says how the pod of a failed create was named, which decides what a
// 409 AlreadyExists means.
type PodNaming int

// The namings.
const (
	// FixedName (the zero value): the create asked for a name of its own
	// (metadata.name: a run's pod, an Indexed Job's pod of an index). A 409
	// AlreadyExists means a pod holds that name: most likely the caller's own,
	// stored by an earlier create whose answer was lost.
	FixedName PodNaming = iota
	// GeneratedName: the API server picks the name (metadata.generateName, a
	// NonIndexed Job's pods). A 409 AlreadyExists means the generated name was
	// taken: no pod of the caller's holds it, and the next create generates
	// another.
	GeneratedName
)

// CreateErrorClass is what a pod-create error means for the run.
type CreateErrorClass string

// The classes.
const (
	// CreateErrorNone: no error, the pod was created.
	CreateErrorNone CreateErrorClass = "None"
	// CreateErrorRetry: the create may succeed later; back off and retry.
	CreateErrorRetry CreateErrorClass = "Retry"
	// CreateErrorExists: the pod exists already (409 AlreadyExists), most
	// likely created by an earlier sync whose answer was lost; adopt it once
	// the cache shows it.
	CreateErrorExists CreateErrorClass = "Exists"
	// CreateErrorTerminal: the API server refused the pod itself; the same
	// request gets the same answer, so the run errors.
	CreateErrorTerminal CreateErrorClass = "Terminal"
)

// CreateErrorVerdict is the classification of one create error.
type CreateErrorVerdict struct {
	// Class is what the error means.
	Class CreateErrorClass
	// Code is the HTTP status code judged: the API status's code, or the
	// code the API server sends with its reason when the code is missing; 0
	// for an error without an API status.
	Code int
	// Why says in words why the error has this class.
	Why string
}

// ClassifyCreateError says what a failed pod create means under policy, for a
// pod named as naming says: the one classification of create errors, for a
// single-pod run (FixedName: Plan.CreateFailed) as for a reconcile.Reconciler's
// pods (FixedName for an index's, GeneratedName for the others; a Job never fails
// on a create error, but a pod of its own under the name is adopted). err may be
// wrapped (errors.As finds the API status). With CreateErrorsJobkit, by status
// code:
//
//	nil                       None
//	no API status             Retry     a network error, a timeout, a cancelled context:
//	                                    the request may not have reached the server
//	400 BadRequest            Terminal  the request is malformed: the same pod is refused again
//	401 Unauthorized          Terminal  as plank; the controller's credentials, not the run, are wrong,
//	                                    but retrying a run forever hides that
//	403 Forbidden             Terminal  admission, pod security, an exceeded quota, a namespace being
//	                                    deleted: the run never waits forever for room that may not come
//	404 NotFound              Retry     the namespace or a referenced object may not be visible yet
//	409 AlreadyExists         Exists    FixedName: a pod with the name exists: an earlier create whose
//	                                    answer was lost; adopting it is what the run wants (plank: Terminal)
//	                          Retry     GeneratedName: the generated name was taken; the next create
//	                                    generates another
//	409 Conflict (other)      Retry     optimistic concurrency: the next try sees the newer object
//	410, 405, 406, 413, 415   Terminal  the request cannot succeed as it is
//	422 Invalid               Terminal  the pod spec is invalid
//	429 TooManyRequests       Retry     throttled by the server or a webhook
//	other 4xx                 Terminal  the server refused the request itself
//	5xx and anything else     Retry     the server failed, not the request
//
// With CreateErrorsPlank every 4xx is Terminal and everything else Retry.
// A status without a code is judged by its reason, with the code the API
// server sends with that reason. ClassifyCreateError is O(depth of the error
// chain) and safe for concurrent use.
func ClassifyCreateError(err error, policy CreateErrorPolicy, naming PodNaming) CreateErrorVerdict {
	if err == nil {
		return CreateErrorVerdict{Class: CreateErrorNone, Why: "the pod was created"}
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return CreateErrorVerdict{Class: CreateErrorRetry, Why: "no API status: the request may not have reached the API server"}
	}
	st := status.Status()
	code := int(st.Code)
	if code == 0 {
		code = codeForReason(st.Reason)
	}
	v := CreateErrorVerdict{Code: code}
	is4xx := code >= 400 && code < 500
	if policy == CreateErrorsPlank {
		if is4xx {
			v.Class, v.Why = CreateErrorTerminal, "a 4xx answer (plank's rule)"
		} else {
			v.Class, v.Why = CreateErrorRetry, "not a 4xx answer (plank's rule)"
		}
		return v
	}
	switch {
	case code == http.StatusConflict && st.Reason == metav1.StatusReasonAlreadyExists && naming == GeneratedName:
		v.Class, v.Why = CreateErrorRetry, "a generated name was taken: the next create generates another"
	case code == http.StatusConflict && st.Reason == metav1.StatusReasonAlreadyExists:
		v.Class, v.Why = CreateErrorExists, "the pod exists already: adopt it"
	case code == http.StatusConflict:
		v.Class, v.Why = CreateErrorRetry, "a conflict: the next try sees the newer object"
	case code == http.StatusNotFound:
		v.Class, v.Why = CreateErrorRetry, "not found: the missing object may appear"
	case code == http.StatusTooManyRequests:
		v.Class, v.Why = CreateErrorRetry, "throttled"
	case is4xx:
		v.Class, v.Why = CreateErrorTerminal, "the API server refused the pod itself"
	default:
		v.Class, v.Why = CreateErrorRetry, "the server failed, not the request"
	}
	return v
}

// CreateFailed returns the plan that follows a failed create of the pod
// that p asked for: Finish with StateError and "Pod can not be created:
// <err>" for a Terminal error; Wait for the cache to show the pod (reason
// CreateExists, requeue after one second) for Exists; Backoff for Retry.
// The result has no StartTime and no Supersede: steps 1 and 2 of p are done
// by the time its create fails. A nil err returns p.
func (p Plan) CreateFailed(err error) Plan {
	v := ClassifyCreateError(err, p.CreateErrors, FixedName)
	next := Plan{CreateErrors: p.CreateErrors}
	switch v.Class {
	case CreateErrorNone:
		return p
	case CreateErrorTerminal:
		next.Action, next.Reason = ActionFinish, reasonCreateRefused
		next.Status = Status{State: StateError, Description: MessageCreateRefused + ": " + err.Error(), Complete: true}
	case CreateErrorExists:
		next.Action, next.Reason, next.RequeueAfter = ActionWait, reasonCreateExists, existsRetry
	default:
		next.Action, next.Reason = ActionBackoff, reasonCreateFailed
	}
	return next
}

// codeForReason returns the HTTP code the API server sends with reason, or 0
// for a reason without a fixed code. Only statuses built by hand lack a code.
func codeForReason(reason metav1.StatusReason) int {
	switch reason {
	case metav1.StatusReasonBadRequest:
		return http.StatusBadRequest
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonNotFound:
		return http.StatusNotFound
	case metav1.StatusReasonMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case metav1.StatusReasonNotAcceptable:
		return http.StatusNotAcceptable
	case metav1.StatusReasonAlreadyExists, metav1.StatusReasonConflict:
		return http.StatusConflict
	case metav1.StatusReasonGone, metav1.StatusReasonExpired:
		return http.StatusGone
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	case metav1.StatusReasonUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case metav1.StatusReasonInvalid:
		return http.StatusUnprocessableEntity
	case metav1.StatusReasonTooManyRequests:
		return http.StatusTooManyRequests
	case metav1.StatusReasonInternalError, metav1.StatusReasonServerTimeout:
		return http.StatusInternalServerError
	case metav1.StatusReasonServiceUnavailable:
		return http.StatusServiceUnavailable
	case metav1.StatusReasonTimeout:
		return http.StatusGatewayTimeout
	}
	return 0
}
