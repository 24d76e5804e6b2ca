package cmdflags

import (
	"testing"
	"time"
)

// SetBackoffForTest makes WaitForAPIServer retry every d for the rest of the test.
func SetBackoffForTest(t *testing.T, d time.Duration) {
	old := APIServerBackoff
	APIServerBackoff.Duration, APIServerBackoff.Cap = d, d
	t.Cleanup(func() { APIServerBackoff = old })
}
