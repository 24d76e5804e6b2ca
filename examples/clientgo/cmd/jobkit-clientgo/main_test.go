package main

import (
	"io"
	"math"
	"reflect"
	"runtime/debug"
	"testing"
	"time"

	"github.com/jobkit/jobkit/examples/clientgo"
	"github.com/jobkit/jobkit/examples/internal/clientflags"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{name: "defaults", args: nil, want: options{Flags: cmdflags.Flags{Workers: 5, ManagedBy: clientgo.DefaultName, LeaseNamespace: "kube-system", MetricsAddr: ":8080", ProbeAddr: ":8081",
			RateLimits: clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250}, LogFormat: "text", APIBackoff: plainbackoff.Policy{Base: time.Second, Max: time.Minute}}, leaseName: "jobkit-job-controller",
			leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: 2 * time.Second, contentType: "application/vnd.kubernetes.protobuf", gc: gcSettings{percent: defaultGCPercent}}},
		{name: "all set", args: []string{"--kubeconfig=/k", "--workers=2", "--managed-by=example.com/jobs", "--leader-elect", "--leader-elect-namespace=ops", "--leader-elect-name=jobs", "-v=2",
			"--metrics-bind-address=127.0.0.1:9090", "--health-probe-bind-address=0", "--kube-api-qps=100", "--kube-api-burst=200", "--kube-api-content-type=application/json",
			"--api-backoff-base=5ms", "--api-backoff-max=2s", "--gc-percent=25", "--memory-limit-mib=96"},
			want: options{Flags: cmdflags.Flags{Kubeconfig: "/k", Workers: 2, ManagedBy: "example.com/jobs", LeaderElect: true, LeaseNamespace: "ops",
				MetricsAddr: "127.0.0.1:9090", ProbeAddr: "0", RateLimits: clientflags.RateLimits{QPS: 100, Burst: 200, MaxInFlight: 250}, LogFormat: "text", Verbosity: 2,
				APIBackoff: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: 2 * time.Second}}, leaseName: "jobs",
				leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: 2 * time.Second, contentType: "application/json", gc: gcSettings{percent: 25, memoryLimit: 96}}},
		{name: "no workers", args: []string{"--workers=0"}, wantErr: true},
		{name: "empty name", args: []string{"--managed-by="}, wantErr: true},
		{name: "lease without name", args: []string{"--leader-elect", "--leader-elect-name="}, wantErr: true},
		{name: "unknown content type", args: []string{"--kube-api-content-type=application/yaml"}, wantErr: true},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: true},
		{name: "no qps", args: []string{"--kube-api-qps=0"}, wantErr: true},
		{name: "stray argument", args: []string{"extra"}, wantErr: true},
		{name: "negative memory limit", args: []string{"--memory-limit-mib=-1"}, wantErr: true},
		{name: "collector off without a limit", args: []string{"--gc-percent=-1"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("parseFlags(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

// The flags set the collector's target and limit unless GOGC and GOMEMLIMIT do.
func TestGCSettingsApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	tests := []struct {
		name      string
		gc        gcSettings
		env       map[string]string
		want      []any
		wantGC    int
		wantLimit int64
	}{
		{name: "defaults", gc: gcSettings{percent: defaultGCPercent}, want: []any{"gcPercent", defaultGCPercent}, wantGC: defaultGCPercent, wantLimit: math.MaxInt64},
		{name: "both set", gc: gcSettings{percent: 25, memoryLimit: 96}, want: []any{"gcPercent", 25, "memoryLimitMiB", 96}, wantGC: 25, wantLimit: 96 << 20},
		{name: "GOGC wins", gc: gcSettings{percent: 25, memoryLimit: 96}, env: map[string]string{"GOGC": "200"}, want: []any{"memoryLimitMiB", 96}, wantGC: 100, wantLimit: 96 << 20},
		{name: "GOMEMLIMIT wins", gc: gcSettings{percent: 25, memoryLimit: 96}, env: map[string]string{"GOMEMLIMIT": "1GiB"}, want: []any{"gcPercent", 25}, wantGC: 25, wantLimit: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			got := tt.gc.apply(func(k string) string { return tt.env[k] })
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("apply() = %v, want %v", got, tt.want)
			}
			if gc := debug.SetGCPercent(100); gc != tt.wantGC {
				t.Errorf("GC percent = %d, want %d", gc, tt.wantGC)
			}
			if limit := debug.SetMemoryLimit(-1); limit != tt.wantLimit {
				t.Errorf("memory limit = %d, want %d", limit, tt.wantLimit)
			}
		})
	}
}
