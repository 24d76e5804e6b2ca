package testenv

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/jobkit/jobkit/controllerruntime/testenv/assets"
)

// StartTimeout bounds how long kube-apiserver and etcd may take to become ready (and
// to stop). envtest's default of 20 s is too short on a loaded 2-core machine, where
// a cold kube-apiserver start was seen to take longer and fail the whole package.
const StartTimeout = 3 * time.Minute

// Assets returns the directory holding kube-apiserver and etcd (assets.Dir with the
// versions of the environment), finding or building them once per process.
var Assets = sync.OnceValues(func() (string, error) {
	return assets.Dir(context.Background(), assets.EnvVersions())
})

// Start starts an API server with etcd, installs the CRDs of crdDirs (each a
// directory or file of CustomResourceDefinition manifests; one missing is an
// error) and returns the environment, to Stop, and a configuration to reach the
// API server as an administrator.
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
