package assets

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// fakeBinaries writes kube-apiserver and etcd scripts into dir that succeed (ok)
// or fail when run.
func fakeBinaries(t *testing.T, dir string, ok bool) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts as binaries")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	code := "0"
	if !ok {
		code = "1"
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit "+code+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFind(t *testing.T) {
	v := Versions{Kubernetes: "1.37.2", Etcd: "3.7.0"}
	platform := "-" + runtime.GOOS + "-" + runtime.GOARCH
	tests := []struct {
		name   string
		assets string          // $KUBEBUILDER_ASSETS
		dirs   map[string]bool // directories under the temp root with binaries that run (true) or fail
		want   string          // relative to the temp root; "" means none
	}{
		{name: "KUBEBUILDER_ASSETS wins, unchecked", assets: "/given", want: "/given"},
		{name: "nothing anywhere", want: ""},
		{name: "the jobkit cache", dirs: map[string]bool{"cache/k8s-1.37.2-etcd-3.7.0": true, "data/kubebuilder-envtest/k8s/1.37.2" + platform: true},
			want: "cache/k8s-1.37.2-etcd-3.7.0"},
		{name: "broken cache: setup-envtest's exact release", dirs: map[string]bool{"cache/k8s-1.37.2-etcd-3.7.0": false, "data/kubebuilder-envtest/k8s/1.37.2" + platform: true},
			want: "data/kubebuilder-envtest/k8s/1.37.2" + platform},
		{name: "setup-envtest's newest release", dirs: map[string]bool{
			"data/kubebuilder-envtest/k8s/1.9.0" + platform: true, "data/kubebuilder-envtest/k8s/1.34.1" + platform: true,
			"data/kubebuilder-envtest/k8s/1.35.0" + platform: false, "data/kubebuilder-envtest/k8s/1.36.0-other-os": true},
			want: "data/kubebuilder-envtest/k8s/1.34.1" + platform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			t.Setenv("KUBEBUILDER_ASSETS", tt.assets)
			t.Setenv("JOBKIT_ENVTEST_CACHE", filepath.Join(root, "cache"))
			t.Setenv("XDG_DATA_HOME", filepath.Join(root, "data"))
			if runtime.GOOS != "linux" {
				t.Skip("setup-envtest's store is under XDG_DATA_HOME on Linux only")
			}
			for dir, ok := range tt.dirs {
				fakeBinaries(t, filepath.Join(root, dir), ok)
			}
			want := tt.want
			if want != "" && !filepath.IsAbs(want) {
				want = filepath.Join(root, want)
			}
			if got := Find(v); got != want {
				t.Errorf("Find() = %q, want %q", got, want)
			}
		})
	}
}

func TestCompareRelease(t *testing.T) {
	dirs := []string{"1.34.1-linux-amd64", "1.9.0-linux-amd64", "1.37.2-linux-amd64", "1.34.10-linux-amd64"}
	slices.SortFunc(dirs, compareRelease)
	want := []string{"1.9.0-linux-amd64", "1.34.1-linux-amd64", "1.34.10-linux-amd64", "1.37.2-linux-amd64"}
	if !slices.Equal(dirs, want) {
		t.Errorf("sorted = %v, want %v", dirs, want)
	}
}

func TestEnvVersions(t *testing.T) {
	t.Setenv("K8S_VERSION", "")
	t.Setenv("ETCD_VERSION", "")
	t.Setenv("STAGING_VERSION", "")
	v := EnvVersions()
	if v.Kubernetes != DefaultKubernetesVersion || v.Etcd != DefaultEtcdVersion || v.staging() != "0.37.2" {
		t.Errorf("EnvVersions() = %+v (staging %s), want the defaults and staging 0.37.2", v, v.staging())
	}
	t.Setenv("K8S_VERSION", "1.35.4")
	t.Setenv("STAGING_VERSION", "0.35.3")
	if v := EnvVersions(); v.Kubernetes != "1.35.4" || v.staging() != "0.35.3" {
		t.Errorf("EnvVersions() = %+v, want Kubernetes 1.35.4, staging 0.35.3", v)
	}
}

// Build keeps binaries that run: nothing is built (no go command is even needed
// past the check).
func TestBuildKeepsWorkingBinaries(t *testing.T) {
	dir := t.TempDir()
	fakeBinaries(t, dir, true)
	Log = nil
	t.Cleanup(func() { Log = os.Stderr })
	if err := Build(t.Context(), dir, Versions{Kubernetes: "1.37.2", Etcd: "3.7.0"}); err != nil {
		t.Fatalf("Build over working binaries = %v", err)
	}
}
