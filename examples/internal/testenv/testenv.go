// Package testenv starts a real kube-apiserver and etcd for the integration tests of
// the examples, through controller-runtime's envtest. The binaries cannot be
// downloaded in this project's environment; hack/envtest-bins.sh builds them from the
// Go module proxy and caches them outside the repository. Start uses
// $KUBEBUILDER_ASSETS when set and runs that script otherwise.
package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StartTimeout bounds how long kube-apiserver and etcd may take to become ready (and
// to stop). envtest's default of 20 s is too short on a loaded 2-core machine, where
// a cold kube-apiserver start was seen to take longer and fail the whole package.
const StartTimeout = 3 * time.Minute

var (
	assetsOnce sync.Once
	assetsDir  string
	assetsErr  error
)

// Assets returns the directory holding kube-apiserver and etcd, building them when
// needed (about 12 minutes the first time on 2 cores).
func Assets() (string, error) {
	assetsOnce.Do(func() {
		if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
			assetsDir = dir
			return
		}
		_, file, _, _ := runtime.Caller(0)
		script := filepath.Join(filepath.Dir(file), "..", "..", "..", "hack", "envtest-bins.sh")
		var out, errOut bytes.Buffer
		cmd := exec.Command("bash", script)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			assetsErr = fmt.Errorf("building envtest binaries with %s: %w\n%s", script, err, errOut.String())
			return
		}
		assetsDir = strings.TrimSpace(out.String())
	})
	return assetsDir, assetsErr
}

// Start starts an API server with etcd; call Stop on the returned environment.
func Start(crdDirs ...string) (*envtest.Environment, *rest.Config, error) {
	dir, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{BinaryAssetsDirectory: dir, CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: len(crdDirs) > 0,
		ControlPlaneStartTimeout: StartTimeout, ControlPlaneStopTimeout: StartTimeout}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", dir, err)
	}
	return env, cfg, nil
}
