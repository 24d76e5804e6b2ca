package reconcile

import "testing"

func TestCompareResourceVersions(t *testing.T) {
	tests := []struct {
		a, b   string
		want   int
		wantOK bool
	}{
		{a: "9", b: "10", want: -1, wantOK: true},
		{a: "10", b: "10", want: 0, wantOK: true},
		{a: "11", b: "10", want: 1, wantOK: true},
		{a: "abc", b: "10", wantOK: false},
		{a: "10", b: "", wantOK: false},
		{a: "-1", b: "1", wantOK: false},
	}
	for _, tc := range tests {
		c, ok := compareResourceVersions(tc.a, tc.b)
		if ok != tc.wantOK || (ok && c != tc.want) {
			t.Errorf("compareResourceVersions(%q, %q) = %d, %v, want %d, %v", tc.a, tc.b, c, ok, tc.want, tc.wantOK)
		}
	}
}
