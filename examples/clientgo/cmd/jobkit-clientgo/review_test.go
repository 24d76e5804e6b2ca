package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The filter serves a request only to a token the API server authenticates, for a
// user it authorizes to get the path; allowed decisions are remembered for a minute,
// refusals never.
func TestReviewFilter(t *testing.T) {
	const good, viewer = "good-token", "viewer-token"
	tests := []struct {
		name      string
		header    string
		path      string
		reviewErr error
		want      int
		wantCalls int // TokenReviews and SubjectAccessReviews created
	}{
		{name: "no token", header: "", path: "/metrics", want: http.StatusUnauthorized},
		{name: "not a bearer token", header: "Basic " + good, path: "/metrics", want: http.StatusUnauthorized},
		{name: "unknown token", header: "Bearer nope", path: "/metrics", want: http.StatusUnauthorized, wantCalls: 1},
		{name: "authenticated, not authorized", header: "Bearer " + viewer, path: "/metrics", want: http.StatusForbidden, wantCalls: 2},
		{name: "authorized for another path only", header: "Bearer " + good, path: "/debug", want: http.StatusForbidden, wantCalls: 2},
		{name: "authenticated and authorized", header: "Bearer " + good, path: "/metrics", want: http.StatusOK, wantCalls: 2},
		{name: "lower-case scheme", header: "bearer " + good, path: "/metrics", want: http.StatusOK, wantCalls: 2},
		{name: "API server unavailable", header: "Bearer " + good, path: "/metrics", reviewErr: errors.New("unavailable"), want: http.StatusInternalServerError, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			calls := 0
			cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				if tt.reviewErr != nil {
					return true, nil, tt.reviewErr
				}
				tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview).DeepCopy()
				switch tr.Spec.Token {
				case good:
					tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "prometheus", Groups: []string{"monitoring"}}}
				case viewer:
					tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: "viewer"}}
				}
				return true, tr, nil
			})
			cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				calls++
				sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview).DeepCopy()
				s := sar.Spec
				sar.Status.Allowed = s.User == "prometheus" && len(s.Groups) == 1 && s.NonResourceAttributes != nil &&
					s.NonResourceAttributes.Path == "/metrics" && s.NonResourceAttributes.Verb == "get"
				return true, sar, nil
			})
			now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			rv := &reviewer{cs: cs, now: func() time.Time { return now }, allowed: map[[32]byte]time.Time{}}
			h := rv.handler(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
			get := func() int {
				req := httptest.NewRequest(http.MethodGet, tt.path, nil)
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Code
			}
			if got := get(); got != tt.want || calls != tt.wantCalls {
				t.Fatalf("GET %s with %q = %d after %d reviews, want %d after %d", tt.path, tt.header, got, calls, tt.want, tt.wantCalls)
			}
			// Again: an allowed request is remembered, anything else asked again.
			again := tt.wantCalls
			if tt.want != http.StatusOK {
				again *= 2
			}
			if got := get(); got != tt.want || calls != again {
				t.Errorf("GET again = %d after %d reviews, want %d after %d", got, calls, tt.want, again)
			}
			if tt.want == http.StatusOK {
				now = now.Add(reviewAllowTTL)
				if got := get(); got != http.StatusOK || calls != 2*tt.wantCalls {
					t.Errorf("GET after the TTL = %d after %d reviews, want 200 after %d", got, calls, 2*tt.wantCalls)
				}
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header string
		want   string
		ok     bool
	}{
		{header: "Bearer abc", want: "abc", ok: true},
		{header: "  bearer   abc ", want: "abc", ok: true},
		{header: "Bearer", ok: false},
		{header: "Bearer  ", ok: false},
		{header: "Basic abc", want: "abc", ok: false},
		{header: "", ok: false},
	}
	for _, tt := range tests {
		got, ok := bearerToken(tt.header)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("bearerToken(%q) = %q, %v, want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
