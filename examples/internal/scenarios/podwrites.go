package scenarios

import (
	"net/http"
	"strings"
	"sync"
)

// podPatches watches the HTTP traffic of a controller and counts, per pod, the PATCH
// requests it sends and those the API server answered with 409 Conflict: the
// scenarios on adoption and release check that the controller writes each pod no
// more often than the Job controller does.
type podPatches struct {
	mu  sync.Mutex
	per map[string]patchCount // by "namespace/name"
}

// patchCount is what podPatches counted for one pod.
type patchCount struct{ Patches, Conflicts int }

// wrap is a rest.Config.WrapTransport.
func (w *podPatches) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		key, ok := podPatchKey(req)
		if !ok {
			return resp, err
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.per == nil {
			w.per = map[string]patchCount{}
		}
		c := w.per[key]
		c.Patches++
		if err == nil && resp.StatusCode == http.StatusConflict {
			c.Conflicts++
		}
		w.per[key] = c
		return resp, err
	})
}

// of returns the count for the pod namespace/name.
func (w *podPatches) of(namespace, name string) patchCount {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.per[namespace+"/"+name]
}

// podPatchKey matches PATCH /api/v1/namespaces/{ns}/pods/{name} (not a subresource)
// and returns "ns/name".
func podPatchKey(req *http.Request) (string, bool) {
	if req.Method != http.MethodPatch {
		return "", false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) != 6 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		return "", false
	}
	return parts[3] + "/" + parts[5], true
}
