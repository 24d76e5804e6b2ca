package podoutcome

import (
	"fmt"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
)

// ErrInvalidInput is matched (errors.Is) by every error this package returns.
// It is plaindl.ErrInvalidInput, so that an error from Decide matches it
// whichever of Classify, deadlines.Check or Next rejected the input.
var ErrInvalidInput = plaindl.ErrInvalidInput

// InputError reports an argument that was rejected.
type InputError struct {
	// Field names the rejected argument or field, e.g. "Options.MaxRevivals".
	Field string
	// Value is the rejected value as text.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("podoutcome: %s=%s: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidInput.
func (e *InputError) Unwrap() error { return ErrInvalidInput }
