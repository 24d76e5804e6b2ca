package clientgo

import (
	"io"
	"net/http"
	"sync"

	"k8s.io/client-go/transport"
)

// DefaultMaxInFlight is the number of requests LimitInFlight lets the commands send
// at once (their --kube-api-max-in-flight default). kube-apiserver serves 100
// concurrent HTTP/2 streams per connection (--http2-max-streams-per-connection, the
// default since Kubernetes 1.29), and Go's client dials another TLS connection for a
// request past them. A sync sends up to 500 creations or finalizer removals at once:
// without a limit that dialled a connection, with a client-certificate handshake,
// for most of them; with 250 a burst needs three connections, and the handshakes
// measured were as few as kube-controller-manager's. At 5,000 pods on a real control plane (docs/performance.md,
// "Real control plane") 250 created the pods as fast as kube-controller-manager with as
// few handshakes, where 90 (one connection) created them a third slower.
const DefaultMaxInFlight = 250

// LimitInFlight returns a transport wrapper for rest.Config.Wrap that lets at most n
// requests other than watches be in flight at once; the others wait for a slot (or
// for their context to end). A request is in flight from the moment it is sent until
// its response body is closed (client-go closes every body it reads).
//
// Why: a Reconciler runs the calls of one sync at once, up to 500 pod creations or
// finalizer removals, and several syncs run in parallel. Over HTTP/2, a request past
// the server's stream limit of the connection does not wait: Go's transport dials a
// new TLS connection for it, and with hundreds of such requests at once hundreds of
// connections are set up (a client-certificate handshake each, on both sides) and
// dropped again once idle. On kube-apiserver with 5,000 pods that was about a tenth of
// the controller's CPU. The API server serves no faster for more concurrent requests
// than its streams allow, so waiting for a slot costs nothing.
//
// Watches pass through uncounted: each holds a stream for as long as it lasts. Other
// long-running requests (logs with follow, exec, port-forward) would hold a slot as
// long: do not send them through a limited client. n < 1 means no limit.
func LimitInFlight(n int) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		if n < 1 {
			return rt
		}
		return &inFlight{rt: rt, slots: make(chan struct{}, n)}
	}
}

type inFlight struct {
	rt    http.RoundTripper
	slots chan struct{}
}

func (l *inFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) {
		return l.rt.RoundTrip(req)
	}
	select {
	case l.slots <- struct{}{}:
	case <-req.Context().Done():
		if req.Body != nil {
			req.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, req.Context().Err()
	}
	resp, err := l.rt.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		<-l.slots
		return resp, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() { <-l.slots }}
	return resp, nil
}

// isWatch reports whether req is a watch: ?watch=true (or 1) on a list.
func isWatch(req *http.Request) bool {
	switch req.URL.Query().Get("watch") {
	case "true", "1":
		return true
	}
	return false
}

// releasingBody frees its request's slot once, when it is closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
