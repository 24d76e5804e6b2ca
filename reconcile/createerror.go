package reconcile

// What a failed pod create means for a single-pod job (a CI run, a build): retry,
// or give up on the job because its pod can never be created.

import (
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateErrorClass is what a pod-create error means for a single-pod job.
type CreateErrorClass int

const (
	// CreateErrorNone is the class of a nil error: the pod was created.
	CreateErrorNone CreateErrorClass = iota
	// CreateErrorRetry: the create may succeed later (a server error, a timeout,
	// a network failure, throttling, a conflict, a missing object that may yet
	// appear). Return the error and let the work queue back off.
	CreateErrorRetry
	// CreateErrorTerminal: the API server refused the request itself (an invalid
	// or forbidden pod, a bad request): sending it again gives the same answer, so
	// the job errors.
	CreateErrorTerminal
)

// String returns "None", "Retry" or "Terminal".
func (c CreateErrorClass) String() string {
	switch c {
	case CreateErrorNone:
		return "None"
	case CreateErrorRetry:
		return "Retry"
	case CreateErrorTerminal:
		return "Terminal"
	}
	return "CreateErrorClass(" + strconv.Itoa(int(c)) + ")"
}

// CreateErrorMessagePrefix begins the description a single-pod job records when
// its pod cannot be created; CreateErrorMessage adds the error after it.
const CreateErrorMessagePrefix = "Pod can not be created"

// CreateErrorMessage returns the job description for a terminal create error:
// "Pod can not be created: <err>" (plank's wording).
func CreateErrorMessage(err error) string {
	return CreateErrorMessagePrefix + ": " + err.Error()
}

// ClassifyCreateError tells whether a single-pod job controller should retry a pod
// create that failed with err, or error the job: an API status error with a
// 4xx code is terminal, except 404 NotFound, 409 Conflict (AlreadyExists included)
// and 429 TooManyRequests, which may succeed later; everything else (5xx,
// timeouts, network errors, a cancelled context, an error that carries no API
// status) is retried. err may be wrapped (errors.As finds the API status). A status
// without a code is judged by its reason, using the code the API server sends with
// that reason.
//
// Notes:
//   - A 403 includes an exceeded ResourceQuota and a namespace being deleted; both
//     are terminal here, as in Prow's plank, so that a job never waits forever for
//     room that may not come. A controller that prefers to wait for quota can check
//     apierrors.IsForbidden and the message itself.
//   - Batch Jobs never fail on create errors: the batch/v1 Job controller retries
//     every failed create with backoff, because a Job with many pods must not fail
//     for one rejected create. This classification is for single-pod jobs only.
//
// ClassifyCreateError is O(depth of the error chain) and safe for concurrent use.
func ClassifyCreateError(err error) CreateErrorClass {
	if err == nil {
		return CreateErrorNone
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return CreateErrorRetry
	}
	st := status.Status()
	code := int(st.Code)
	if code == 0 {
		code = codeForReason(st.Reason)
	}
	switch {
	case code == http.StatusNotFound, code == http.StatusConflict, code == http.StatusTooManyRequests:
		return CreateErrorRetry
	case code >= 400 && code < 500:
		return CreateErrorTerminal
	}
	return CreateErrorRetry
}

// IsTerminalCreateError reports whether ClassifyCreateError(err) is
// CreateErrorTerminal.
func IsTerminalCreateError(err error) bool {
	return ClassifyCreateError(err) == CreateErrorTerminal
}

// codeForReason returns the HTTP code the API server sends with reason, or 0 for
// a reason without a fixed code (Unknown, empty). Only statuses built by hand lack
// a code; the API server always sets one.
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
