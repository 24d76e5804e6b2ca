package main

import (
	"strings"
	"testing"
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
		{name: "no qps", args: []string{"--kube-api-qps", "0"}, wantErr: "--kube-api-qps=0: must be positive"},
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
