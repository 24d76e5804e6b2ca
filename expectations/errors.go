package expectations

import "fmt"

// InputError reports an argument that was rejected; every error of this package is
// one (errors.As tells them from others). The call that returns it keeps whatever
// part of its input was valid (see each method).
type InputError struct {
	// Op is the function or method that rejected the input, e.g. "ExpectCreations".
	Op string
	// Field names the argument: "count", "uids[3]", "Config.TTL".
	Field string
	// Value is the rejected value as text.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("expectations.%s: %s=%s: %s", e.Op, e.Field, e.Value, e.Reason)
}

func negativeCount(op string, n int) *InputError {
	return &InputError{Op: op, Field: "count", Value: fmt.Sprint(n), Reason: "must not be negative"}
}

func emptyUID(op string, i int) *InputError {
	return &InputError{Op: op, Field: fmt.Sprintf("uids[%d]", i), Value: `""`,
		Reason: "empty UID (a pod that the API server has not created yet can never be observed)"}
}
