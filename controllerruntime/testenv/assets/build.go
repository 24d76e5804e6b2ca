package assets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// Log receives Build's progress lines; nil is silent. It is not safe to change
// while Build runs.
var Log io.Writer = os.Stderr

// Build builds etcd (go.etcd.io/etcd/server/v3) and kube-apiserver
// (k8s.io/kubernetes/cmd/kube-apiserver) of v from the Go module proxy into dir,
// each in a throwaway module, with CGO_ENABLED=0 and -trimpath: the binaries
// cannot be downloaded everywhere, but the modules can. k8s.io/kubernetes points
// its staging modules (k8s.io/api, k8s.io/client-go, ...) at its own tree; each is
// pinned to the published module of v.Staging instead. A binary that already runs
// is kept. One Build at a time holds dir's lock file (.lock), so concurrent test
// processes build once.
func Build(ctx context.Context, dir string, v Versions) error {
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("%w: %w", ErrNoGo, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("envtest assets: %w", err)
	}
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return fmt.Errorf("envtest assets: lock %s: %w", dir, err)
	}
	defer unlock()
	if !works(filepath.Join(dir, "etcd")) {
		logf("building etcd v%s (about 1 minute)", v.Etcd)
		if err := buildBinary(ctx, dir, "etcd", "go.etcd.io/etcd/server/v3", func(mod string) error {
			return gocmd(ctx, mod, "get", "go.etcd.io/etcd/server/v3@v"+v.Etcd)
		}); err != nil {
			return err
		}
	}
	if !works(filepath.Join(dir, "kube-apiserver")) {
		logf("building kube-apiserver v%s (about 11 minutes on 2 cores)", v.Kubernetes)
		if err := buildBinary(ctx, dir, "kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", func(mod string) error {
			return pinStaging(ctx, mod, v)
		}); err != nil {
			return err
		}
	}
	return nil
}

// buildBinary builds pkg as dir/name in a throwaway module that prepare fills in.
func buildBinary(ctx context.Context, dir, name, pkg string, prepare func(mod string) error) error {
	mod, err := os.MkdirTemp("", "jobkit-envtest-"+name+"-")
	if err != nil {
		return fmt.Errorf("envtest assets: %w", err)
	}
	defer os.RemoveAll(mod)
	tmp := filepath.Join(dir, name+".tmp")
	if err := gocmd(ctx, mod, "mod", "init", "jobkit.tools/"+name); err != nil {
		return err
	}
	if err := prepare(mod); err != nil {
		return err
	}
	if err := gocmd(ctx, mod, "build", "-trimpath", "-o", tmp, pkg); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("envtest assets: %w", err)
	}
	return nil
}

// stagingReplace matches a replace directive of k8s.io/kubernetes's go.mod that
// points a staging module at its tree.
var stagingReplace = regexp.MustCompile(`(?m)^\s*(k8s\.io/[a-z0-9-]+) => \./staging/`)

// pinStaging requires k8s.io/kubernetes of v in mod and replaces each of its
// staging modules by the published one of v.Staging.
func pinStaging(ctx context.Context, mod string, v Versions) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@v"+v.Kubernetes)
	cmd.Dir, cmd.Stdout, cmd.Stderr = mod, &out, Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("envtest assets: go mod download k8s.io/kubernetes@v%s: %w", v.Kubernetes, err)
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out.Bytes(), &info); err != nil {
		return fmt.Errorf("envtest assets: go mod download k8s.io/kubernetes@v%s: %w", v.Kubernetes, err)
	}
	gomod, err := os.ReadFile(info.GoMod)
	if err != nil {
		return fmt.Errorf("envtest assets: %w", err)
	}
	for _, m := range stagingReplace.FindAllSubmatch(gomod, -1) {
		if err := gocmd(ctx, mod, "mod", "edit", "-replace", string(m[1])+"="+string(m[1])+"@v"+v.staging()); err != nil {
			return err
		}
	}
	if err := gocmd(ctx, mod, "mod", "edit", "-require", "k8s.io/kubernetes@v"+v.Kubernetes); err != nil {
		return err
	}
	return gocmd(ctx, mod, "get", "k8s.io/kubernetes/cmd/kube-apiserver@v"+v.Kubernetes)
}

// gocmd runs the go command in dir, its output to Log, without cgo.
func gocmd(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = Log, &errOut
	if Log == nil {
		cmd.Stdout = io.Discard
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("envtest assets: go %v: %w\n%s", args, err, errOut.String())
	}
	if Log != nil {
		_, _ = Log.Write(errOut.Bytes())
	}
	return nil
}

func logf(format string, args ...any) {
	if Log != nil {
		fmt.Fprintf(Log, "envtest-bins: "+format+"\n", args...)
	}
}
