package controllerruntime_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/jobkit/jobkit/examples/controllerruntime"
)

// With SecureMetrics, /metrics is served over HTTPS and refuses a client the API
// server cannot authenticate (controller-runtime's authentication filter).
func TestSecureMetrics(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	mgr, err := controllerruntime.NewManager(restConfig, controllerruntime.ManagerOptions{
		MetricsBindAddress: addr, SecureMetrics: true, SkipNameValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // self-signed certificate
	var code int
	waitFor(t, "the metrics server", 30*time.Second, func() bool {
		resp, err := c.Get("https://" + addr + "/metrics")
		if err != nil {
			return false
		}
		resp.Body.Close()
		code = resp.StatusCode
		return true
	})
	if code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Errorf("GET /metrics without a token = %d, want 401 or 403", code)
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("GET /metrics over plain HTTP = 200, want no plain HTTP")
		}
	}
}
