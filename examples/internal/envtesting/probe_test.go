package envtesting

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRequireHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	tests := []struct {
		name       string
		path       string
		want       int
		wantErrors int
		wantFatal  bool
	}{
		{name: "answers as wanted", path: "/readyz", want: http.StatusOK},
		{name: "answers otherwise", path: "/healthz", want: http.StatusOK, wantErrors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			fatal := onGoroutineWith(r, func(tb testing.TB) { RequireHTTPStatus(tb, srv.URL+tt.path, tt.want) })
			if fatal != "" || len(r.errors) != tt.wantErrors {
				t.Errorf("RequireHTTPStatus(%s, %d): fatal %q, errors %q; want %d errors", tt.path, tt.want, fatal, r.errors, tt.wantErrors)
			}
		})
	}
	r := &recorder{TB: t}
	srv.Close()
	if fatal := onGoroutineWith(r, func(tb testing.TB) { RequireHTTPStatus(tb, srv.URL+"/readyz", http.StatusOK) }); fatal == "" {
		t.Error("RequireHTTPStatus of a closed server did not fail the test")
	}
}
