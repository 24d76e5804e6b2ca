package envtesting

import (
	"net/http"
	"testing"
)

// RequireHTTPStatus fails the test unless a GET of url answers with the status
// code want: a command's /readyz or /healthz.
func RequireHTTPStatus(t testing.TB, url string, want int) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != want {
		t.Errorf("GET %s = %d, want %d", url, resp.StatusCode, want)
	}
}
