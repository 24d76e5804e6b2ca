package kueueflags_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/examples/kueue/internal/kueueflags"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueueName: true\n")
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		wantNil  bool
		wantMJWQ bool
	}{
		{name: "no flags", wantNil: true},
		{name: "--kueue alone: Kueue's defaults", args: []string{"--kueue"}, wantNil: true},
		{name: "a Configuration", args: []string{"--kueue", "--kueue-config=" + good}, wantMJWQ: true},
		{name: "config without --kueue", args: []string{"--kueue-config=" + good}, wantErr: "--kueue-config is set without --kueue"},
		{name: "another kind", args: []string{"--kueue", "--kueue-config=" + write("kind.yaml", "apiVersion: v1\nkind: ConfigMap\n")}, wantErr: `apiVersion "v1", kind "ConfigMap"`},
		{name: "an unknown field", args: []string{"--kueue", "--kueue-config=" + write("field.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nqueueing: x\n")}, wantErr: "queueing"},
		{name: "no file", args: []string{"--kueue", "--kueue-config=" + filepath.Join(dir, "none.yaml")}, wantErr: "--kueue-config: open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f := kueueflags.Register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.Config()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Config() = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (cfg == nil) != tt.wantNil || (cfg != nil && cfg.ManageJobsWithoutQueueName != tt.wantMJWQ) {
				t.Errorf("Config() = %+v, want nil %v, manageJobsWithoutQueueName %v", cfg, tt.wantNil, tt.wantMJWQ)
			}
		})
	}
}

func ExampleRegister() {
	fs := flag.NewFlagSet("trainingjob-controller", flag.ContinueOnError)
	f := kueueflags.Register(fs)
	_ = fs.Parse([]string{"--kueue"})
	cfg, err := f.Config()
	fmt.Println(f.Enabled, cfg == nil, err)
	// Output: true true <nil>
}
