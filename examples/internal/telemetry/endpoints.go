package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one named check of /healthz or /readyz: nil means it passes. It runs on
// the goroutine of the HTTP request and may read the request's context.
type Check func(*http.Request) error

// Endpoints configure Listen: where to serve the Prometheus /metrics endpoint and
// the /healthz and /readyz probes of a Kubernetes Deployment.
type Endpoints struct {
	// MetricsAddr is the host:port of /metrics; empty or "0" serves no metrics.
	MetricsAddr string
	// ProbeAddr is the host:port of /healthz and /readyz; empty or "0" serves no
	// probes. It may equal MetricsAddr: one server then serves the three paths
	// (unless the port is 0: each then gets a free port of its own).
	ProbeAddr string
	// Gatherer provides the metrics; nil means prometheus.DefaultGatherer.
	Gatherer prometheus.Gatherer
	// Healthz and Readyz are the checks of /healthz and /readyz. A probe answers 200
	// "ok" when every check passes (no check passes trivially), and 500 naming each
	// failed check and its error otherwise.
	Healthz, Readyz map[string]Check
	// Profiling serves Go's profiles (net/http/pprof) under /debug/pprof/ beside
	// /metrics, as kube-controller-manager's --profiling does. Off by default: the
	// endpoint has no authentication.
	Profiling bool
}

// Servers are the HTTP servers of Endpoints, listening since Listen returned.
type Servers struct {
	servers   []*http.Server
	listeners []net.Listener
	metrics   string
	probes    string
}

// ShutdownTimeout bounds how long Serve waits for requests in flight once its
// context ends.
const ShutdownTimeout = 5 * time.Second

// Listen opens the listeners of e, so that an address that cannot be bound is an
// error here, before the controller starts; Serve serves them.
func Listen(e Endpoints) (*Servers, error) {
	gatherer := e.Gatherer
	if gatherer == nil {
		gatherer = prometheus.DefaultGatherer
	}
	type server struct {
		addr      string
		mux       *http.ServeMux
		isMetrics bool
		isProbes  bool
	}
	var servers []*server
	if enabled(e.MetricsAddr) {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
		if e.Profiling {
			mux.HandleFunc("/debug/pprof/", pprof.Index)
			mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
			mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
			mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
			mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		}
		servers = append(servers, &server{addr: e.MetricsAddr, mux: mux, isMetrics: true})
	}
	if enabled(e.ProbeAddr) {
		// One server for both when the addresses are the same, unless the port is
		// 0, which asks for a port of each one's own.
		if len(servers) == 0 || e.ProbeAddr != e.MetricsAddr || anyPort(e.ProbeAddr) {
			servers = append(servers, &server{addr: e.ProbeAddr, mux: http.NewServeMux()})
		}
		last := servers[len(servers)-1]
		last.isProbes = true
		last.mux.Handle("/healthz", probe(e.Healthz))
		last.mux.Handle("/readyz", probe(e.Readyz))
	}
	s := &Servers{}
	for _, srv := range servers {
		l, err := net.Listen("tcp", srv.addr)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("listen on %q: %w", srv.addr, err)
		}
		if srv.isMetrics {
			s.metrics = l.Addr().String()
		}
		if srv.isProbes {
			s.probes = l.Addr().String()
		}
		s.listeners = append(s.listeners, l)
		s.servers = append(s.servers, &http.Server{Handler: srv.mux, ReadHeaderTimeout: 10 * time.Second})
	}
	return s, nil
}

func enabled(addr string) bool { return addr != "" && addr != "0" }

// anyPort reports whether addr asks for any free port.
func anyPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	return err == nil && port == "0"
}

// MetricsAddr is the address /metrics is served on (the port chosen when the
// configured one was 0), or "" when no metrics are served.
func (s *Servers) MetricsAddr() string { return s.metrics }

// ProbeAddr is the address /healthz and /readyz are served on, or "".
func (s *Servers) ProbeAddr() string { return s.probes }

// Serve serves until ctx ends, then shuts the servers down, waiting up to
// ShutdownTimeout for requests in flight. It returns the first error of a server
// other than its shutdown. Call it once.
func (s *Servers) Serve(ctx context.Context) error {
	errs := make(chan error, len(s.servers))
	var wg sync.WaitGroup
	for i, srv := range s.servers {
		wg.Go(func() {
			if err := srv.Serve(s.listeners[i]); !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		})
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	for _, srv := range s.servers {
		_ = srv.Shutdown(shutdownCtx)
	}
	wg.Wait()
	return err
}

// close closes the listeners of a Listen that failed half-way.
func (s *Servers) close() {
	for _, l := range s.listeners {
		_ = l.Close()
	}
}

// probe answers 200 "ok" when every check passes, else 500 with one line per
// failed check, in the order of their names.
func probe(checks map[string]Check) http.Handler {
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	slices.Sort(names)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var failed strings.Builder
		for _, name := range names {
			if err := checks[name](r); err != nil {
				fmt.Fprintf(&failed, "[-]%s failed: %v\n", name, err)
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed.Len() > 0 {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = fmt.Fprint(w, failed.String())
			return
		}
		_, _ = fmt.Fprint(w, "ok")
	})
}
