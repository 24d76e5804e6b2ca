package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jobkit/jobkit/examples/internal/telemetry"
)

// serve starts the servers of e until the test ends.
func serve(t *testing.T, e telemetry.Endpoints) *telemetry.Servers {
	t.Helper()
	s, err := telemetry.Listen(e)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve = %v, want nil after cancellation", err)
		}
	})
	return s
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestEndpoints(t *testing.T) {
	pass := func(*http.Request) error { return nil }
	fail := func(*http.Request) error { return errors.New("caches not synced") }
	reg := prometheus.NewRegistry()
	skips := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "job_controller_stale_sync_skips_total", Help: "test"}, []string{"group", "resource"})
	reg.MustRegister(skips)
	skips.WithLabelValues("batch", "jobs").Inc()
	tests := []struct {
		name     string
		healthz  map[string]telemetry.Check
		readyz   map[string]telemetry.Check
		wantCode map[string]int
		wantBody map[string]string
	}{
		{name: "no checks", wantCode: map[string]int{"/healthz": 200, "/readyz": 200}, wantBody: map[string]string{"/healthz": "ok", "/readyz": "ok"}},
		{name: "passing checks", healthz: map[string]telemetry.Check{"ping": pass}, readyz: map[string]telemetry.Check{"caches": pass, "other": pass},
			wantCode: map[string]int{"/healthz": 200, "/readyz": 200}, wantBody: map[string]string{"/healthz": "ok", "/readyz": "ok"}},
		{name: "a failing readiness check", healthz: map[string]telemetry.Check{"ping": pass}, readyz: map[string]telemetry.Check{"caches": fail, "b": pass, "a": fail},
			wantCode: map[string]int{"/healthz": 200, "/readyz": 500},
			wantBody: map[string]string{"/healthz": "ok", "/readyz": "[-]a failed: caches not synced\n[-]caches failed: caches not synced\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, telemetry.Endpoints{MetricsAddr: "127.0.0.1:0", ProbeAddr: "127.0.0.1:0", Gatherer: reg, Healthz: tt.healthz, Readyz: tt.readyz})
			if s.MetricsAddr() == s.ProbeAddr() {
				t.Fatalf("metrics and probes both on %s, want two ports", s.ProbeAddr())
			}
			for path, want := range tt.wantCode {
				code, body := get(t, "http://"+s.ProbeAddr()+path)
				if code != want || body != tt.wantBody[path] {
					t.Errorf("GET %s = %d %q, want %d %q", path, code, body, want, tt.wantBody[path])
				}
			}
			code, body := get(t, "http://"+s.MetricsAddr()+"/metrics")
			if code != 200 || !strings.Contains(body, `job_controller_stale_sync_skips_total{group="batch",resource="jobs"} 1`+"\n") {
				t.Errorf(`GET /metrics = %d %q, want 200 with job_controller_stale_sync_skips_total{group="batch",resource="jobs"} 1`, code, body)
			}
			if code, _ := get(t, "http://"+s.MetricsAddr()+"/healthz"); code != http.StatusNotFound {
				t.Errorf("GET /healthz on the metrics port = %d, want 404", code)
			}
		})
	}
}

func TestEndpointsOneAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := serve(t, telemetry.Endpoints{MetricsAddr: addr, ProbeAddr: addr, Gatherer: prometheus.NewRegistry()})
	if s.MetricsAddr() != addr || s.ProbeAddr() != addr {
		t.Fatalf("addresses %s and %s, want both %s", s.MetricsAddr(), s.ProbeAddr(), addr)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := get(t, "http://"+addr+path); code != 200 {
			t.Errorf("GET %s = %d, want 200", path, code)
		}
	}
}

func TestEndpointsDisabled(t *testing.T) {
	for _, addr := range []string{"", "0"} {
		s := serve(t, telemetry.Endpoints{MetricsAddr: addr, ProbeAddr: addr})
		if s.MetricsAddr() != "" || s.ProbeAddr() != "" {
			t.Errorf("Listen(%q) serves on %q and %q, want nothing", addr, s.MetricsAddr(), s.ProbeAddr())
		}
	}
}

func TestListenError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	_, err = telemetry.Listen(telemetry.Endpoints{MetricsAddr: "127.0.0.1:0", ProbeAddr: taken})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", taken)) {
		t.Errorf("Listen on a taken address = %v, want an error naming %q", err, taken)
	}
}

func TestEndpointsProfiling(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := serve(t, telemetry.Endpoints{MetricsAddr: "127.0.0.1:0", Profiling: on})
		code, body := get(t, "http://"+s.MetricsAddr()+"/debug/pprof/")
		if on && (code != http.StatusOK || !strings.Contains(body, "goroutine")) {
			t.Errorf("Profiling on: /debug/pprof/ = %d %q, want 200 and the profile index", code, body)
		}
		if !on && code != http.StatusNotFound {
			t.Errorf("Profiling off: /debug/pprof/ = %d, want 404", code)
		}
	}
}
