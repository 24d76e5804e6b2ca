package fielderr

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is the kind of an Error, named as the API server names them.
type Type string

// The kinds of error.
const (
	// Required: a required field is empty.
	Required Type = "Required value"
	// Invalid: the value breaks a rule that Detail states.
	Invalid Type = "Invalid value"
	// NotSupported: the value is not one of Error.Supported.
	NotSupported Type = "Unsupported value"
	// TooMany: a list is longer than Error.Max.
	TooMany Type = "Too many"
	// TooLong: a string is longer than Error.Max bytes.
	TooLong Type = "Too long"
	// Duplicate: a value repeats an earlier one.
	Duplicate Type = "Duplicate value"
	// Forbidden: the field may not be set or changed now; Detail says why.
	Forbidden Type = "Forbidden"
)

// Error is one rule of the API server that an input breaks.
type Error struct {
	// Type is the kind of error.
	Type Type
	// Field is the path of the field from the root of the input, in the API's
	// names: "rules[0].onExitCodes.values[2]"; a whole rule is "rules[0]".
	Field string
	// BadValue is the rejected value, typed as in the input; the length of the
	// list for TooMany; nil when the error is about a whole element or a value is
	// missing.
	BadValue any
	// Detail says what is wrong, in the API server's words.
	Detail string
	// Supported are the valid values (NotSupported only).
	Supported []string
	// Max is the largest allowed length (TooMany, TooLong).
	Max int
	// Origin names the kind of rule broken where the API server names it
	// ("minimum" for a negative count), else "".
	Origin string
}

// Error renders the error as the API server does: field, type, value, detail.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Field)
	b.WriteString(": ")
	b.WriteString(string(e.Type))
	switch v := e.BadValue.(type) {
	case nil:
	case string:
		if len(v) > 64 {
			v = v[:64] + "..."
		}
		b.WriteString(": " + strconv.Quote(v))
	default:
		fmt.Fprintf(&b, ": %#v", v)
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	return b.String()
}
