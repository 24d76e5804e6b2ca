package fieldcheck

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jobkit/jobkit/plain/fielderr"
)

// Join renders a list of errors after the name of the package that found them.
func Join(pkg string, errs []*fielderr.Error) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return pkg + ": " + strings.Join(parts, "; ")
}

// NotSupportedValue returns the error of a value that is not one of valid.
func NotSupportedValue[T ~string](field string, v T, valid []T) *fielderr.Error {
	s := make([]string, len(valid))
	for i, x := range valid {
		s[i] = string(x)
	}
	return &fielderr.Error{Type: fielderr.NotSupported, Field: field, BadValue: v, Supported: s, Detail: fmt.Sprintf("supported values: %q", s)}
}

// TooManyItems returns the error of a list of n items, more than max.
func TooManyItems(field string, n, max int) *fielderr.Error {
	return &fielderr.Error{Type: fielderr.TooMany, Field: field, BadValue: n, Max: max, Detail: "must have at most " + strconv.Itoa(max) + " items"}
}
