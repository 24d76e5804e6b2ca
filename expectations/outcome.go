package expectations

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// OutcomeUnknown reports whether a failed create or delete request may have been
// applied all the same, so that its expectation must not be given back:
//
//   - a timeout, from the client (the request was sent, the answer lost) or from the
//     API server (it gives up waiting for storage, which may still commit);
//   - an error that carries no API status at all: a connection reset, an EOF, a
//     cancelled or expired context, anything that happened on the way and says
//     nothing about what the server did.
//
// Every other error has an API status (400 Invalid, 403, 404, 409 AlreadyExists or
// Conflict, 422, 429, 500...): the API server answered, and the request surely did
// nothing. A nil error is not unknown.
//
// The rule for a controller that counts its own requests: raise the expectation
// before the request; when the request fails and OutcomeUnknown(err) is false, give
// the expectation back (CreationObserved, DeletionObserved); when it is true, keep
// it. The object may exist, and its informer event will lower the
// expectation; when it does not exist, the TTL frees the key, later (a controller can
// resolve the doubt sooner by looking, or, for a create, by naming the object itself
// and sending the same create again, which the API server answers AlreadyExists when
// the first one was stored). Giving back an expectation whose request may have been
// applied is how a stale cache makes a controller create a second pod.
func OutcomeUnknown(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}
