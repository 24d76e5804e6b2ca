package main

import (
	"errors"
	"flag"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/jobkit/jobkit/examples/internal/cmdflags"
)

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantErr: "flag provided but not defined"},
		{name: "stray argument", args: []string{"run"}, wantErr: `unexpected arguments: ["run"]`},
		{name: "no worker", args: []string{"--workers", "0"}, wantErr: "--workers=0: must be at least 1"},
		{name: "empty managed-by", args: []string{"--managed-by="}, wantErr: `--managed-by="": must not be empty`},
		{name: "child managed-by without a domain", args: []string{"--child-managed-by=controller"}, wantErr: `--child-managed-by="controller": must be empty or a domain-prefixed path`},
		{name: "child managed-by too long", args: []string{"--child-managed-by=example.com/" + strings.Repeat("a", 60)}, wantErr: "of at most 63 characters"},
		{name: "an unknown feature gate", args: []string{"--feature-gates=ElasticJobSet=true"}, wantErr: "unrecognized feature gate: ElasticJobSet (known: InPlaceRestart)"},
		{name: "a feature gate that is not a boolean", args: []string{"--feature-gates=InPlaceRestart=on"}, wantErr: "invalid value of InPlaceRestart=on"},
		{name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, wantErr: "loading the cluster configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(t.Context(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("run(%q) error = %v, want one containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// --help is not a failure: run returns flag.ErrHelp, on which main exits 0.
func TestHelpExitsZero(t *testing.T) {
	err := run(t.Context(), []string{"--help"})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(--help) = %v, want flag.ErrHelp", err)
	}
	if code := cmdflags.ExitCode("jobset-controller", err, false, io.Discard); code != 0 {
		t.Errorf("ExitCode(--help) = %d, want 0", code)
	}
}

// --feature-gates=InPlaceRestart=true turns on the controller's in-place
// restart (JobSet's alpha gate of the same name) and the JobSets are
// validated under it; it is off by default.
func TestFeatureGateInPlaceRestart(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{args: nil},
		{args: []string{"--feature-gates=InPlaceRestart=true"}, want: true},
		{args: []string{"--feature-gates=InPlaceRestart=false"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		gates := cmdflags.NewFeatureGates(map[string]bool{gateInPlaceRestart: false})
		fs.Var(gates, "feature-gates", "")
		f, err := cmdflags.Register(fs, cmdflags.Defaults{Objects: "JobSets", ManagedBy: "example.com/x", Workers: 1}).Parse(tc.args)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.args, err)
		}
		if got := options(f, "", gates).InPlaceRestart; got != tc.want {
			t.Errorf("options(%q).InPlaceRestart = %t, want %t", tc.args, got, tc.want)
		}
		// The JobSets are validated under the gate: off, one under
		// InPlaceRestart is refused, as JobSet's webhook refuses it.
		if got := options(f, "", gates).FeatureGates(); !maps.Equal(got, map[string]bool{"InPlaceRestart": tc.want}) {
			t.Errorf("options(%q).FeatureGates() = %v, want InPlaceRestart %t", tc.args, got, tc.want)
		}
	}
}
