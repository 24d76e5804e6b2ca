package plan

import (
	"hash/fnv"
	"testing"
)

// TestFNV64a checks fnv64a against hash/fnv.
func TestFNV64a(t *testing.T) {
	for _, s := range []string{"", "a", "p-1", "0b9a3b8e-5c1d-4f0e-9d6a-2f1c3e4b5a69"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := fnv64a(s), h.Sum64(); got != want {
			t.Errorf("fnv64a(%q) = %x, want %x", s, got, want)
		}
	}
}
