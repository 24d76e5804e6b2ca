package successpolicy

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzValidateAfterCompile checks that the shortcut Compile takes (validate with
// the counts it parsed) reports exactly what Validate reports.
func FuzzValidateAfterCompile(f *testing.F) {
	f.Add("1,3-5", int32(2), uint16(10), uint8(3))
	f.Add("3-3", int32(1), uint16(5), uint8(1))
	f.Add("0-00,07-7,9", int32(4), uint16(10), uint8(3))
	f.Add("1-2,3-03,4", int32(9), uint16(3), uint8(3))
	f.Fuzz(func(t *testing.T, list string, n int32, completions uint16, flags uint8) {
		var r Rule
		if flags&1 != 0 {
			r.SucceededIndexes = &list
		}
		if flags&2 != 0 {
			r.SucceededCount = &n
		}
		p := &Policy{Rules: []Rule{r, {SucceededCount: &n}}}
		comp := int(completions % 4096)
		c, err := Compile(p, comp)
		var re *RuleError
		if errors.As(err, &re) {
			return // a list did not parse: Compile did not take the shortcut
		}
		if got, want := validate(p, comp, []int{c.rules[0].listedCount, 0}), Validate(p, comp); !reflect.DeepEqual(got, want) {
			t.Fatalf("validate after Compile = %v, Validate = %v", got, want)
		}
	})
}

func TestEqualEnds(t *testing.T) {
	cases := []struct {
		name string
		s    string
		want []string
	}{
		{name: "none", s: "0,2-4,7"},
		{name: "empty", s: ""},
		{name: "equal ends, leading zeros", s: "1,03-3,5-5", want: []string{"non-increasing order, previous: 3, current: 3", "non-increasing order, previous: 5, current: 5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := equalEnds(tc.s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("equalEnds(%q) = %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}
