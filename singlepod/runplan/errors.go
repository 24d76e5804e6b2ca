package runplan

import (
	"fmt"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
)

// InputError reports a rejected input, naming the field and its value. It
// matches plaindl.ErrInvalidInput (package plain/deadlines), the one sentinel of
// the single-pod packages, as every error Compute returns does.
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

// Unwrap returns plaindl.ErrInvalidInput.
func (e *InputError) Unwrap() error { return plaindl.ErrInvalidInput }
