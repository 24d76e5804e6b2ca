package assets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Versions of the binaries Dir builds when none are found; the environment
// variables K8S_VERSION, ETCD_VERSION and STAGING_VERSION override them, as in
// hack/envtest-bins.sh.
const (
	DefaultKubernetesVersion = "1.37.2"
	DefaultEtcdVersion       = "3.7.0"
)

// Versions name the releases of kube-apiserver and etcd to build.
type Versions struct {
	// Kubernetes is the release of kube-apiserver ("1.37.2").
	Kubernetes string
	// Etcd is the release of etcd ("3.7.0").
	Etcd string
	// Staging is the version of the k8s.io staging modules that k8s.io/kubernetes
	// points at its own tree; empty means 0.<minor>.<patch> of Kubernetes.
	Staging string
}

// EnvVersions returns the Versions of the environment, defaults for what it
// leaves unset.
func EnvVersions() Versions {
	return Versions{
		Kubernetes: cmp.Or(os.Getenv("K8S_VERSION"), DefaultKubernetesVersion),
		Etcd:       cmp.Or(os.Getenv("ETCD_VERSION"), DefaultEtcdVersion),
		Staging:    os.Getenv("STAGING_VERSION"),
	}
}

func (v Versions) staging() string {
	if v.Staging != "" {
		return v.Staging
	}
	return "0." + strings.TrimPrefix(v.Kubernetes, "1.")
}

// CacheDir is the directory where Dir builds v: under $JOBKIT_ENVTEST_CACHE, or
// ~/.cache/jobkit/envtest, a directory k8s-<Kubernetes>-etcd-<Etcd>.
func CacheDir(v Versions) (string, error) {
	root := os.Getenv("JOBKIT_ENVTEST_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("envtest assets: no cache directory: set JOBKIT_ENVTEST_CACHE: %w", err)
		}
		root = filepath.Join(home, ".cache", "jobkit", "envtest")
	}
	return filepath.Join(root, "k8s-"+v.Kubernetes+"-etcd-"+v.Etcd), nil
}

// Find returns the first directory holding kube-apiserver and etcd that run
// (--version succeeds), or "" when none does: $KUBEBUILDER_ASSETS (taken as it is,
// unchecked, as envtest takes it), then CacheDir of v, then setup-envtest's store
// (its k8s/<Kubernetes>-<os>-<arch>, then the newest release there).
func Find(v Versions) string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	var dirs []string
	if dir, err := CacheDir(v); err == nil {
		dirs = append(dirs, dir)
	}
	if store := setupEnvtestStore(); store != "" {
		k8s := filepath.Join(store, "k8s")
		dirs = append(dirs, filepath.Join(k8s, v.Kubernetes+"-"+runtime.GOOS+"-"+runtime.GOARCH))
		entries, _ := os.ReadDir(k8s)
		var others []string
		for _, e := range entries {
			if e.IsDir() && strings.HasSuffix(e.Name(), "-"+runtime.GOOS+"-"+runtime.GOARCH) {
				others = append(others, filepath.Join(k8s, e.Name()))
			}
		}
		slices.SortFunc(others, compareRelease)
		slices.Reverse(others)
		dirs = append(dirs, others...)
	}
	for _, dir := range dirs {
		if works(filepath.Join(dir, "kube-apiserver")) && works(filepath.Join(dir, "etcd")) {
			return dir
		}
	}
	return ""
}

// compareRelease orders directories named <major>.<minor>.<patch>-<os>-<arch> by
// release.
func compareRelease(a, b string) int {
	parts := func(dir string) []string {
		release, _, _ := strings.Cut(filepath.Base(dir), "-")
		return strings.Split(release, ".")
	}
	pa, pb := parts(a), parts(b)
	for i := range min(len(pa), len(pb)) {
		if c := cmp.Compare(len(pa[i]), len(pb[i])); c != 0 {
			return c
		}
		if c := cmp.Compare(pa[i], pb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

// setupEnvtestStore is setup-envtest's default store: $XDG_DATA_HOME (or
// ~/.local/share)/kubebuilder-envtest on Linux and other Unix systems,
// ~/Library/Application Support/io.kubebuilder.envtest on macOS,
// %LocalAppData%\kubebuilder-envtest on Windows.
func setupEnvtestStore() string {
	home, _ := os.UserHomeDir()
	switch runtime.GOOS {
	case "darwin":
		if home == "" {
			return ""
		}
		return filepath.Join(home, "Library", "Application Support", "io.kubebuilder.envtest")
	case "windows":
		if dir := os.Getenv("LocalAppData"); dir != "" {
			return filepath.Join(dir, "kubebuilder-envtest")
		}
		return ""
	}
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "kubebuilder-envtest")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "kubebuilder-envtest")
}

// works reports whether the binary at path runs.
func works(path string) bool {
	return exec.Command(path, "--version").Run() == nil
}

// Dir returns the directory of Find, or builds the binaries of v into CacheDir
// (Build) when none is found: about 12 minutes the first time on 2 cores.
func Dir(ctx context.Context, v Versions) (string, error) {
	if dir := Find(v); dir != "" {
		return dir, nil
	}
	dir, err := CacheDir(v)
	if err != nil {
		return "", err
	}
	if err := Build(ctx, dir, v); err != nil {
		return "", err
	}
	return dir, nil
}

// ErrNoGo is wrapped by Build's error when no go command is on the PATH.
var ErrNoGo = errors.New("envtest assets: the go command is needed to build kube-apiserver and etcd")
