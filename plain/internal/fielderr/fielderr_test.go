package fielderr_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/plain/internal/fielderr"
)

type action string

func TestError(t *testing.T) {
	cases := []struct {
		name string
		err  *fielderr.Error
		want string
	}{
		{name: "required", err: &fielderr.Error{Type: fielderr.Required, Field: "rules", Detail: "at least one"},
			want: "rules: Required value: at least one"},
		{name: "typed string value", err: fielderr.NotSupportedValue("rules[0].action", action("Retry"), []action{"Count", "FailJob"}),
			want: `rules[0].action: Unsupported value: "Retry": supported values: ["Count" "FailJob"]`},
		{name: "long string is cut", err: &fielderr.Error{Type: fielderr.Invalid, Field: "s", BadValue: strings.Repeat("x", 70), Detail: "bad"},
			want: `s: Invalid value: "` + strings.Repeat("x", 64) + `...": bad`},
		{name: "list", err: &fielderr.Error{Type: fielderr.Invalid, Field: "v", BadValue: []int32{3, 1}, Detail: "must be ordered"},
			want: "v: Invalid value: []int32{3, 1}: must be ordered"},
		{name: "too many", err: fielderr.TooManyItems("rules", 21, 20), want: "rules: Too many: 21: must have at most 20 items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

func ExampleJoin() {
	errs := []*fielderr.Error{fielderr.TooManyItems("rules", 21, 20), {Type: fielderr.Duplicate, Field: "values[1]", BadValue: int32(4)}}
	fmt.Println(fielderr.Join("pkg", errs))
	// Output:
	// pkg: rules: Too many: 21: must have at most 20 items; values[1]: Duplicate value: 4
}
