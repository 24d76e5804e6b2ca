package reconcile

// What a failed pod create means for a single-pod job (a CI run, a build): retry,
// or give up on the job because its pod can never be created.

import (
	"strconv"

	"github.com/jobkit/jobkit/singlepod/runplan"
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
// its pod cannot be created; CreateErrorMessage adds the error after it. It is
// runplan.MessageCreateRefused.
const CreateErrorMessagePrefix = runplan.MessageCreateRefused

// CreateErrorMessage returns the job description for a terminal create error:
// "Pod can not be created: <err>" (plank's wording).
func CreateErrorMessage(err error) string {
	return CreateErrorMessagePrefix + ": " + err.Error()
}

// ClassifyCreateError tells whether a single-pod job controller should retry a pod
// create that failed with err, or error the job, under policy. Under
// runplan.CreateErrorsJobkit an API status error with a 4xx code is terminal, except 404 NotFound, 409 Conflict (AlreadyExists included)
// and 429 TooManyRequests, which may succeed later; everything else (5xx,
// timeouts, network errors, a cancelled context, an error that carries no API
// status) is retried. err may be wrapped (errors.As finds the API status). A status
// without a code is judged by its reason, using the code the API server sends with
// that reason.
//
// That is runplan.ClassifyCreateError under policy runplan.CreateErrorsJobkit,
// whose table gives the reason for each status code, with one merge: runplan's
// Exists (409 AlreadyExists, a pod to adopt) is CreateErrorRetry here, since a retry
// finds the pod in the cache and adopts it. runplan.CreateErrorsPlank makes every
// 4xx terminal (404, 409 and 429 included), as Prow's plank does.
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
func ClassifyCreateError(err error, policy runplan.CreateErrorPolicy) CreateErrorClass {
	switch runplan.ClassifyCreateError(err, policy).Class {
	case runplan.CreateErrorNone:
		return CreateErrorNone
	case runplan.CreateErrorTerminal:
		return CreateErrorTerminal
	}
	return CreateErrorRetry
}

// IsTerminalCreateError reports whether ClassifyCreateError(err,
// runplan.CreateErrorsJobkit) is CreateErrorTerminal.
func IsTerminalCreateError(err error) bool {
	return ClassifyCreateError(err, runplan.CreateErrorsJobkit) == CreateErrorTerminal
}
