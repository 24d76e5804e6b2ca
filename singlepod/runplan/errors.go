package runplan

import (
	"errors"
	"fmt"
)

// ErrInvalidInput is matched (errors.Is) by every error Compute returns.
var ErrInvalidInput = errors.New("invalid input")

// InputError reports a rejected input, naming the field and its value.
type InputError struct {
	// Field names the rejected field, e.g. "Run.MaxConcurrency" or
	// "Outcome.timeouts.pending".
	Field string
	// Value is the rejected value as text.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("runplan: %s=%s: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }
