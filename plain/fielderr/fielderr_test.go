package fielderr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/plain/fielderr"
)

func TestError(t *testing.T) {
	cases := []struct {
		name string
		err  *fielderr.Error
		want string
	}{
		{name: "required", err: &fielderr.Error{Type: fielderr.Required, Field: "rules", Detail: "at least one"},
			want: "rules: Required value: at least one"},
		{name: "long string is cut", err: &fielderr.Error{Type: fielderr.Invalid, Field: "s", BadValue: strings.Repeat("x", 70), Detail: "bad"},
			want: `s: Invalid value: "` + strings.Repeat("x", 64) + `...": bad`},
		{name: "list", err: &fielderr.Error{Type: fielderr.Invalid, Field: "v", BadValue: []int32{3, 1}, Detail: "must be ordered"},
			want: "v: Invalid value: []int32{3, 1}: must be ordered"},
		{name: "no detail", err: &fielderr.Error{Type: fielderr.Duplicate, Field: "values[1]", BadValue: int32(4)},
			want: "values[1]: Duplicate value: 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

// A validator's error list holds *fielderr.Error values: errors.As finds one,
// and its Type tells the kinds apart.
func ExampleError() {
	var err error = fmt.Errorf("validate: %w", &fielderr.Error{Type: fielderr.TooLong, Field: "rules[0].succeededIndexes", BadValue: "0-9", Max: 2, Detail: "may not be more than 2 bytes"})
	var fe *fielderr.Error
	if errors.As(err, &fe) && fe.Type == fielderr.TooLong {
		fmt.Println(fe.Field, fe.Max)
	}
	fmt.Println(err)
	// Output:
	// rules[0].succeededIndexes 2
	// validate: rules[0].succeededIndexes: Too long: "0-9": may not be more than 2 bytes
}
