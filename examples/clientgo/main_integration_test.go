package clientgo_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/jobkit/jobkit/controllerruntime/testenv"
)

// The integration tests share one kube-apiserver and etcd, started by the first test
// that needs them and stopped by TestMain; the unit tests and examples do not start
// them.
var (
	envOnce sync.Once
	env     *envtest.Environment
	envCfg  *rest.Config
	envErr  error
)

// apiServer returns the configuration of the shared API server, starting it on first
// use.
func apiServer(t *testing.T) *rest.Config {
	t.Helper()
	envOnce.Do(func() { env, envCfg, envErr = testenv.Start() })
	if envErr != nil {
		t.Fatal(envErr)
	}
	return envCfg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}
