package cmdflags_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
)

func TestNewLoggerJSON(t *testing.T) {
	var buf bytes.Buffer
	logger, err := cmdflags.NewLogger(cmdflags.FormatJSON, 1, &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("synced", "job", "ns/a")
	logger.V(1).Info("detail")
	logger.V(2).Info("hidden at -v=1")
	logger.Error(errors.New("boom"), "failed", "job", "ns/b")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3 (V(2) is above -v=1):\n%s", len(lines), buf.String())
	}
	want := []map[string]any{
		{"msg": "synced", "v": 0.0, "job": "ns/a"},
		{"msg": "detail", "v": 1.0},
		{"msg": "failed", "level": "error", "err": "boom", "job": "ns/b"},
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, line)
		}
		if _, ok := got["time"]; !ok {
			t.Errorf("line %d has no time: %s", i, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v (%s)", i, k, got[k], v, line)
			}
		}
	}
}

func TestNewLoggerFormats(t *testing.T) {
	for _, tt := range []struct {
		format  string
		wantErr string
	}{
		{format: "text"},
		{format: ""},
		{format: "json"},
		{format: "xml", wantErr: `--logging-format="xml": must be "text" or "json"`},
	} {
		_, err := cmdflags.NewLogger(tt.format, 0, &bytes.Buffer{})
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
			t.Errorf("NewLogger(%q) error = %v, want %q", tt.format, err, tt.wantErr)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		signalled bool
		want      int
		wantOut   string
	}{
		{name: "clean", want: 0},
		{name: "help", err: flag.ErrHelp, want: 0},
		{name: "failure", err: errors.New("no cluster"), want: 1, wantOut: "cmd: no cluster\n"},
		{name: "stopped while waiting", err: context.Canceled, signalled: true, want: 0, wantOut: "cmd: stopped by a signal (context canceled)\n"},
		{name: "cache sync cut by the stop", err: errors.New("failed to wait for caches to sync"), signalled: true, want: 0,
			wantOut: "cmd: stopped by a signal (failed to wait for caches to sync)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if got := cmdflags.ExitCode("cmd", tt.err, tt.signalled, &out); got != tt.want || out.String() != tt.wantOut {
				t.Errorf("ExitCode() = %d, %q; want %d, %q", got, out.String(), tt.want, tt.wantOut)
			}
		})
	}
}

// TestWaitForAPIServer serves /version only from the third request on: the wait
// retries through the failures and returns once it answers.
func TestWaitForAPIServer(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`)
	}))
	defer srv.Close()
	cmdflags.SetBackoffForTest(t, 5*time.Millisecond)
	if err := cmdflags.WaitForAPIServer(context.Background(), &rest.Config{Host: srv.URL}, logr.Discard()); err != nil {
		t.Fatalf("WaitForAPIServer() error = %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("WaitForAPIServer() made %d requests, want 3", n)
	}
}

func TestWaitForAPIServerCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	cmdflags.SetBackoffForTest(t, 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := cmdflags.WaitForAPIServer(ctx, &rest.Config{Host: srv.URL}, logr.Discard())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("WaitForAPIServer() error = %v, want the deadline, naming %s", err, srv.URL)
	}
}

// TestMainSIGTERMWhileWaiting runs Main in a child process whose API server never
// answers, sends SIGTERM while it waits, and expects exit status 0.
func TestMainSIGTERMWhileWaiting(t *testing.T) {
	if os.Getenv("CMDFLAGS_TEST_MAIN") == "1" {
		cmdflags.Main("waiter", func(ctx context.Context, _ []string) error {
			fmt.Fprintln(os.Stderr, "waiting")
			// A closed port on loopback: every attempt fails at once.
			return cmdflags.WaitForAPIServer(ctx, &rest.Config{Host: "http://127.0.0.1:1"}, logr.Discard())
		})
		os.Exit(0) // Main returns on exit status 0, as a main function then ends
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainSIGTERMWhileWaiting$")
	cmd.Env = append(os.Environ(), "CMDFLAGS_TEST_MAIN=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "waiting") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the child never started waiting: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("after SIGTERM the process ended with %v, want exit 0; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "waiter: stopped by a signal") {
		t.Errorf("stderr = %q, want the stop reported", stderr.String())
	}
}

// syncBuffer is a bytes.Buffer written by the child's stderr copier and read by the
// test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
