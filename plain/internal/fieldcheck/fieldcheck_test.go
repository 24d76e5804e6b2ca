package fieldcheck_test

import (
	"fmt"
	"testing"

	"github.com/jobkit/jobkit/plain/fielderr"
	"github.com/jobkit/jobkit/plain/internal/fieldcheck"
)

type action string

func TestBuilders(t *testing.T) {
	cases := []struct {
		name string
		err  *fielderr.Error
		want string
	}{
		{name: "typed string value", err: fieldcheck.NotSupportedValue("rules[0].action", action("Retry"), []action{"Count", "FailJob"}),
			want: `rules[0].action: Unsupported value: "Retry": supported values: ["Count" "FailJob"]`},
		{name: "too many", err: fieldcheck.TooManyItems("rules", 21, 20), want: "rules: Too many: 21: must have at most 20 items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
	if e := fieldcheck.NotSupportedValue("a", action("x"), []action{"y", "z"}); e.Type != fielderr.NotSupported || len(e.Supported) != 2 {
		t.Errorf("NotSupportedValue = %+v, want type NotSupported with the two supported values", e)
	}
	if e := fieldcheck.TooManyItems("a", 3, 2); e.Type != fielderr.TooMany || e.Max != 2 || e.BadValue != 3 {
		t.Errorf("TooManyItems = %+v, want type TooMany, Max 2, BadValue 3", e)
	}
}

func ExampleJoin() {
	errs := []*fielderr.Error{fieldcheck.TooManyItems("rules", 21, 20), {Type: fielderr.Duplicate, Field: "values[1]", BadValue: int32(4)}}
	fmt.Println(fieldcheck.Join("pkg", errs))
	// Output:
	// pkg: rules: Too many: 21: must have at most 20 items; values[1]: Duplicate value: 4
}
