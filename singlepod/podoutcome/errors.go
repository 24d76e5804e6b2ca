package podoutcome

import (
	"fmt"

	plaindl "github.com/jobkit/jobkit/plain/deadlines"
)

// InputError reports an argument that was rejected. It matches
// plaindl.ErrInvalidInput (package plain/deadlines), as every error of this
// package does, so that an error from Decide matches it whichever of Classify,
// deadlines.Check or Next rejected the input.
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

// Unwrap returns plaindl.ErrInvalidInput.
func (e *InputError) Unwrap() error { return plaindl.ErrInvalidInput }
