package concurrency

import (
	"errors"
	"fmt"
)

// ErrUnknownQueue is matched by the error Decide returns for a candidate whose
// queue is missing from Limits.Queues.
// Plank treats this as a failed sync that is retried: the configuration may
// gain the queue later.
var ErrUnknownQueue = errors.New("unknown queue")

// InputError reports an argument that was rejected; every error Decide returns is
// one (errors.As).
type InputError struct {
	// Field names the rejected field, e.g. "Candidate.Queue" or "peers[3].State".
	Field string
	// Value is the rejected value as text.
	Value string
	// Reason says what is wrong with it.
	Reason string
	// Err is a more specific sentinel (ErrUnknownQueue), or nil.
	Err error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("concurrency: %s=%s: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns Err (nil unless a more specific sentinel applies).
func (e *InputError) Unwrap() error { return e.Err }
