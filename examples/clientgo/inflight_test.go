package clientgo_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobkit/jobkit/examples/clientgo"
)

// countingRT answers every request after its gate opens and records the most
// requests it held at once.
type countingRT struct {
	now, peak atomic.Int32
	gate      chan struct{}
	fail      bool
}

func (c *countingRT) RoundTrip(req *http.Request) (*http.Response, error) {
	n := c.now.Add(1)
	for {
		p := c.peak.Load()
		if n <= p || c.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if strings.Contains(req.URL.RawQuery, "watch=") {
		// A watch stays open: it answers at once and does not count as done.
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	<-c.gate
	if c.fail {
		c.now.Add(-1)
		return nil, errors.New("refused")
	}
	return &http.Response{StatusCode: 200, Body: &doneBody{Reader: strings.NewReader("{}"), done: func() { c.now.Add(-1) }}}, nil
}

type doneBody struct {
	io.Reader
	done func()
}

func (b *doneBody) Close() error { b.done(); return nil }

func TestLimitInFlight(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		requests int
		watches  int
		fail     bool
		wantPeak int32
	}{
		{name: "below the limit", limit: 10, requests: 5, wantPeak: 5},
		{name: "at most the limit", limit: 3, requests: 20, wantPeak: 3},
		{name: "errors free their slot", limit: 2, requests: 10, fail: true, wantPeak: 2},
		{name: "watches do not count", limit: 2, requests: 10, watches: 4, wantPeak: 2 + 4},
		{name: "no limit", limit: 0, requests: 12, wantPeak: 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &countingRT{gate: make(chan struct{}), fail: tt.fail}
			limited := clientgo.LimitInFlight(tt.limit)(rt)
			for range tt.watches {
				req, _ := http.NewRequest(http.MethodGet, "https://api/api/v1/pods?watch=true", nil)
				if _, err := limited.RoundTrip(req); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, tt.requests)
			for range tt.requests {
				wg.Go(func() {
					req, _ := http.NewRequest(http.MethodPost, "https://api/api/v1/namespaces/d/pods", nil)
					resp, err := limited.RoundTrip(req)
					if err != nil {
						errs <- err
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					resp.Body.Close() // a second Close frees nothing more
				})
			}
			// Let every request that can be sent reach the transport, then the rest.
			deadline := time.Now().Add(5 * time.Second)
			want := min(int32(tt.requests), tt.wantPeak-int32(tt.watches))
			for rt.now.Load()-int32(tt.watches) < want && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond) // a request over the limit would show now
			close(rt.gate)
			wg.Wait()
			close(errs)
			n := 0
			for range errs {
				n++
			}
			if tt.fail && n != tt.requests || !tt.fail && n != 0 {
				t.Errorf("%d requests failed, want %d", n, map[bool]int{true: tt.requests}[tt.fail])
			}
			if got := rt.peak.Load(); got != tt.wantPeak {
				t.Errorf("at most %d requests at once, want %d", got, tt.wantPeak)
			}
		})
	}
}

func TestLimitInFlightContextEnds(t *testing.T) {
	rt := &countingRT{gate: make(chan struct{})}
	defer close(rt.gate)
	limited := clientgo.LimitInFlight(1)(rt)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "https://api/api/v1/namespaces/d/pods/a", nil)
		_, _ = limited.RoundTrip(req) // holds the only slot until the gate opens
	}()
	for rt.now.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api/api/v1/namespaces/d/pods/b", nil)
	if _, err := limited.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("RoundTrip waiting for a slot when its context ends = %v, want context.DeadlineExceeded", err)
	}
}
