package cmdflags_test

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobkit/jobkit/examples/internal/clientflags"
	"github.com/jobkit/jobkit/examples/internal/cmdflags"
	plainbackoff "github.com/jobkit/jobkit/plain/backoff"
)

var defaults = cmdflags.Defaults{Objects: "Jobs", ManagedBy: "example.com/jobs", Workers: 5, MetricsAddr: ":8080"}

func parse(args ...string) (cmdflags.Flags, error) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return cmdflags.Register(fs, defaults).Parse(args)
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    cmdflags.Flags
		wantErr string
	}{
		{name: "defaults", want: cmdflags.Flags{ManagedBy: "example.com/jobs", Workers: 5, MetricsAddr: ":8080", ProbeAddr: ":8081",
			APIBackoff: plainbackoff.Policy{Base: time.Second, Max: time.Minute}, RateLimits: clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250}, LogFormat: "text"}},
		{name: "all set", args: []string{"--kubeconfig=/k", "--managed-by=x/y", "--workers=2", "--leader-elect", "--leader-elect-namespace=ops",
			"--metrics-bind-address=:8443", "--metrics-secure", "--metrics-cert-path=/certs", "--health-probe-bind-address=:9", "--api-backoff-base=5ms", "--api-backoff-max=2s",
			"--kube-api-qps=50", "--kube-api-burst=60", "--kube-api-max-in-flight=40", "-v=2", "--logging-format=json"},
			want: cmdflags.Flags{Kubeconfig: "/k", ManagedBy: "x/y", Workers: 2, LeaderElect: true, LeaseNamespace: "ops", MetricsAddr: ":8443", MetricsSecure: true, MetricsCertDir: "/certs",
				ProbeAddr: ":9", APIBackoff: plainbackoff.Policy{Base: 5 * time.Millisecond, Max: 2 * time.Second}, RateLimits: clientflags.RateLimits{QPS: 50, Burst: 60, MaxInFlight: 40},
				LogFormat: "json", Verbosity: 2}},
		{name: "bad log format", args: []string{"--logging-format=yaml"}, wantErr: `invalid value "yaml" for flag -logging-format: "yaml": must be "text" or "json"`},
		{name: "a certificate without secure metrics", args: []string{"--metrics-cert-path=/certs"}, wantErr: `--metrics-cert-path="/certs": needs --metrics-secure`},
		{name: "no backoff", args: []string{"--api-backoff-base=0s"}, wantErr: "--api-backoff-base=0s: must be positive"},
		{name: "backoff max below base", args: []string{"--api-backoff-base=2s", "--api-backoff-max=1s"}, wantErr: "--api-backoff-max=1s: must be at least --api-backoff-base (2s)"},
		{name: "no workers", args: []string{"--workers=0"}, wantErr: "--workers=0: must be at least 1"},
		{name: "empty name", args: []string{"--managed-by="}, wantErr: `--managed-by="": must not be empty`},
		{name: "no qps", args: []string{"--kube-api-qps=0"}, wantErr: "--kube-api-qps=0: must be positive"},
		{name: "stray argument", args: []string{"extra"}, wantErr: `unexpected arguments: ["extra"]`},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	if _, err := parse("--help"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("Parse(--help) error = %v, want flag.ErrHelp", err)
	}
}

func TestRESTConfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	const config = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://example.invalid:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := parse("--kubeconfig="+kubeconfig, "--kube-api-qps=7", "--kube-api-burst=9")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.RESTConfig("test-agent")
	if err != nil {
		t.Fatalf("RESTConfig() error = %v", err)
	}
	if cfg.Host != "https://example.invalid:6443" || cfg.QPS != 7 || cfg.Burst != 9 || !strings.HasSuffix(cfg.UserAgent, "/test-agent") || !cfg.DisableCompression {
		t.Errorf("RESTConfig() = host %q, qps %v, burst %d, user agent %q, compression off %v", cfg.Host, cfg.QPS, cfg.Burst, cfg.UserAgent, cfg.DisableCompression)
	}
	f.Kubeconfig = filepath.Join(t.TempDir(), "missing")
	if _, err := f.RESTConfig("test-agent"); err == nil || !strings.Contains(err.Error(), "loading the cluster configuration") {
		t.Errorf("RESTConfig(missing file) error = %v, want one naming the configuration", err)
	}
}

func TestCheckManagedBy(t *testing.T) {
	long := "example.com/" + strings.Repeat("a", 52) // 64 characters
	for _, tc := range []struct {
		v       string
		wantErr string
	}{
		{v: ""},
		{v: "example.com/jobs"},
		{v: long[:63]},
		{v: long, wantErr: `--child-managed-by="` + long + `": must be empty or a domain-prefixed path`},
		{v: "jobs", wantErr: `--child-managed-by="jobs": must be empty`},
		{v: "/jobs", wantErr: `--child-managed-by="/jobs": must be empty`},
		{v: "example.com/", wantErr: `--child-managed-by="example.com/": must be empty`},
	} {
		err := cmdflags.CheckManagedBy("child-managed-by", tc.v)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("CheckManagedBy(%q) = %v, want nil", tc.v, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("CheckManagedBy(%q) = %v, want an error containing %q", tc.v, err, tc.wantErr)
		}
	}
}
