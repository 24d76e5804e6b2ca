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
		{name: "missing kubeconfig", args: []string{"--kubeconfig", "/nonexistent/kubeconfig"}, wantErr: "loading the cluster configuration"},
		{name: "no qps", args: []string{"--kube-api-qps", "0"}, wantErr: "--kube-api-qps=0: must be positive"},
		{name: "bad workers", args: []string{"--kubeconfig", "/nonexistent/kubeconfig", "--workers", "x"}, wantErr: "invalid value"},
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
