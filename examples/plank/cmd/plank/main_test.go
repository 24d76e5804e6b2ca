package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobkit/jobkit/examples/internal/clientflags"
	plaindl "github.com/jobkit/jobkit/plain/deadlines"
	"github.com/jobkit/jobkit/singlepod/runplan"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		wantQueues   map[string]int
		wantPending  int
		wantTimeouts plaindl.Timeouts
		wantLeader   bool
		wantNS       string
		wantCreate   runplan.CreateErrorPolicy
		wantReporter []string
		wantLeaseNS  string
		wantProbe    string
		wantLimits   clientflags.RateLimits
		wantErr      string
	}{
		{
			name:         "defaults",
			wantTimeouts: plaindl.DefaultTimeouts(),
			wantProbe:    "0",
			wantLimits:   clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250},
		},
		{
			name:         "the flag names of every example command",
			args:         []string{"--leader-elect", "--leader-elect-namespace=ops", "--health-probe-bind-address=:8081", "--kube-api-qps=50", "--kube-api-burst=100"},
			wantTimeouts: plaindl.DefaultTimeouts(), wantLeader: true, wantLeaseNS: "ops", wantProbe: ":8081",
			wantLimits: clientflags.RateLimits{QPS: 50, Burst: 100, MaxInFlight: 250},
		},
		{
			name:         "the old spelling of the lease namespace",
			args:         []string{"--leader-elect", "--leader-election-namespace=ops"},
			wantTimeouts: plaindl.DefaultTimeouts(), wantLeader: true, wantLeaseNS: "ops", wantProbe: "0",
			wantLimits: clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250},
		},
		{name: "zero qps", args: []string{"--kube-api-qps=0"}, wantErr: "--kube-api-qps=0: must be positive"},
		{name: "a certificate without secure metrics", args: []string{"--metrics-cert-path=/certs"}, wantErr: `--metrics-cert-path="/certs": needs --metrics-secure`},
		{
			name: "everything",
			args: []string{"--leader-elect", "--namespace=ci", "--max-pending=20", "--queue", "gpu=2", "--queue=e2e=-1",
				"--pod-unscheduled-timeout=1m", "--pod-pending-timeout=0", "--pod-running-timeout=2h", "--kubeconfig=/dev/null", "-v=2",
				"--create-errors=plank", "--reporter-finalizer=a.example/r", "--reporter-finalizer=b.example/r"},
			wantCreate:   runplan.CreateErrorsPlank,
			wantReporter: []string{"a.example/r", "b.example/r"},
			wantQueues:   map[string]int{"gpu": 2, "e2e": -1},
			wantPending:  20,
			wantTimeouts: plaindl.Timeouts{Unscheduled: time.Minute, Running: 2 * time.Hour},
			wantLeader:   true,
			wantNS:       "ci",
			wantProbe:    "0",
			wantLimits:   clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250},
		},
		{name: "queue without capacity", args: []string{"--queue=gpu"}, wantErr: `"gpu": want name=capacity`},
		{name: "queue without name", args: []string{"--queue==2"}, wantErr: `"=2": want name=capacity`},
		{name: "queue capacity not a number", args: []string{"--queue=gpu=two"}, wantErr: `capacity "two" is not an integer`},
		{name: "queue twice", args: []string{"--queue=gpu=1", "--queue=gpu=2"}, wantErr: "queue gpu given twice"},
		{name: "unknown create errors", args: []string{"--create-errors=lenient"}, wantErr: `"lenient": want jobkit or plank`},
		{name: "empty reporter finalizer", args: []string{"--reporter-finalizer="}, wantErr: "must not be empty"},
		{name: "stray argument", args: []string{"run"}, wantErr: `unexpected arguments: ["run"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFlags(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags(%q) = %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.wantQueues, o.cfg.Queues); diff != "" {
				t.Errorf("queues (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTimeouts, *o.cfg.DefaultTimeouts); diff != "" {
				t.Errorf("timeouts (-want +got):\n%s", diff)
			}
			if o.cfg.CreateErrors != tt.wantCreate || !slices.Equal(o.cfg.ReporterFinalizers, tt.wantReporter) {
				t.Errorf("create-errors, reporter-finalizer = %q, %q, want %q, %q",
					o.cfg.CreateErrors, o.cfg.ReporterFinalizers, tt.wantCreate, tt.wantReporter)
			}
			if o.cfg.MaxPending != tt.wantPending || o.leaderElect != tt.wantLeader || o.namespace != tt.wantNS {
				t.Errorf("max-pending, leader-elect, namespace = %d, %v, %q, want %d, %v, %q",
					o.cfg.MaxPending, o.leaderElect, o.namespace, tt.wantPending, tt.wantLeader, tt.wantNS)
			}
			if o.leaderElectNamespace != tt.wantLeaseNS || o.probeAddr != tt.wantProbe || *o.rateLimits != tt.wantLimits {
				t.Errorf("lease namespace, probe address, rate limits = %q, %q, %+v, want %q, %q, %+v",
					o.leaderElectNamespace, o.probeAddr, *o.rateLimits, tt.wantLeaseNS, tt.wantProbe, tt.wantLimits)
			}
		})
	}
}

// --help prints the usage and is not an error of the command: run returns
// flag.ErrHelp, on which main exits 0.
func TestHelp(t *testing.T) {
	var out strings.Builder
	err := run(t.Context(), []string{"--help"}, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(--help) = %v, want flag.ErrHelp", err)
	}
	for _, name := range []string{"-leader-elect-namespace", "-health-probe-bind-address", "-kube-api-qps", "-kube-api-burst"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("--help does not list %s:\n%s", name, out.String())
		}
	}
}
