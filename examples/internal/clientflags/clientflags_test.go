package clientflags_test

import (
	"flag"
	"io"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/jobkit/jobkit/examples/internal/clientflags"
)

func TestRateLimits(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    clientflags.RateLimits
		wantErr string
	}{
		{name: "defaults", want: clientflags.RateLimits{QPS: 20, Burst: 30, MaxInFlight: 250}},
		{name: "set", args: []string{"--kube-api-qps=50.5", "--kube-api-burst=100", "--kube-api-max-in-flight=0"}, want: clientflags.RateLimits{QPS: 50.5, Burst: 100}},
		{name: "negative max in flight", args: []string{"--kube-api-max-in-flight=-1"}, wantErr: "--kube-api-max-in-flight=-1: must not be negative"},
		{name: "zero qps", args: []string{"--kube-api-qps=0"}, wantErr: "--kube-api-qps=0: must be positive"},
		{name: "negative qps", args: []string{"--kube-api-qps=-1"}, wantErr: "--kube-api-qps=-1"},
		{name: "zero burst", args: []string{"--kube-api-burst=0"}, wantErr: "--kube-api-burst=0: must be at least 1"},
		{name: "burst below qps", args: []string{"--kube-api-qps=100", "--kube-api-burst=10"}, wantErr: "--kube-api-burst=10: must be at least --kube-api-qps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			r := clientflags.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := r.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			if *r != tt.want {
				t.Errorf("parsed %+v, want %+v", *r, tt.want)
			}
			cfg := &rest.Config{}
			r.Apply(cfg)
			if cfg.QPS != float32(tt.want.QPS) || cfg.Burst != tt.want.Burst {
				t.Errorf("Apply: QPS %v burst %d, want %v and %d", cfg.QPS, cfg.Burst, tt.want.QPS, tt.want.Burst)
			}
			if wrapped := cfg.WrapTransport != nil; wrapped != (tt.want.MaxInFlight > 0) {
				t.Errorf("Apply: transport wrapped %v, want %v (MaxInFlight %d)", wrapped, !wrapped, tt.want.MaxInFlight)
			}
		})
	}
}
