package concurrency

import (
	"errors"
	"fmt"
)

// ErrInvalidInput is matched (errors.Is) by every error Decide returns.
var ErrInvalidInput = errors.New("invalid input")

// ErrUnknownQueue is matched by the error Decide returns for a candidate whose
// queue is missing from Limits.Queues. It also matches ErrInvalidInput.
// Plank treats this as a failed sync that is retried: the configuration may
// gain the queue later.
var ErrUnknownQueue = fmt.Errorf("%w: unknown queue", ErrInvalidInput)

// InputError reports an argument that was rejected.
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

// Unwrap returns Err when set, else ErrInvalidInput; either way the result
// matches ErrInvalidInput.
func (e *InputError) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrInvalidInput
}
