package scenarios

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// statusWrites watches the HTTP traffic of a controller and records every write to a
// Job's status subresource with the API server's answer: a scenario fails when the
// API server rejected one (anything but success, Conflict, which is optimistic
// concurrency, and NotFound, a Job deleted meanwhile).
type statusWrites struct {
	// group and resource name the objects whose status writes are watched; empty
	// means batch Jobs.
	group, resource string

	mu       sync.Mutex
	accepted int
	rejected []string
}

// wrap is a rest.Config.WrapTransport.
func (w *statusWrites) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || !isStatusWrite(req, cmp.Or(w.group, "batch"), cmp.Or(w.resource, "jobs")) {
			return resp, err
		}
		code := resp.StatusCode
		switch {
		case code >= 200 && code < 300:
			w.mu.Lock()
			w.accepted++
			w.mu.Unlock()
		case code == http.StatusConflict || code == http.StatusNotFound:
		default:
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(body))
			w.mu.Lock()
			w.rejected = append(w.rejected, fmt.Sprintf("%s %s: %d %s", req.Method, req.URL.Path, code, printable(body)))
			w.mu.Unlock()
		}
		return resp, nil
	})
}

// counts returns the writes accepted and the descriptions of those rejected.
func (w *statusWrites) counts() (accepted int, rejected []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.accepted, append([]string(nil), w.rejected...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// isStatusWrite matches PUT and PATCH of
// /apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/status.
func isStatusWrite(req *http.Request, group, resource string) bool {
	if req.Method != http.MethodPut && req.Method != http.MethodPatch {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return len(parts) == 8 && parts[0] == "apis" && parts[1] == group && parts[3] == "namespaces" &&
		parts[5] == resource && parts[7] == "status"
}

// printable keeps the readable part of a response body (JSON, or the strings of a
// protobuf message).
func printable(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r < 32 || r > 126 {
			return ' '
		}
		return r
	}, string(b))
}
