package assets_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/jobkit/jobkit/controllerruntime/testenv/assets"
)

// Where the binaries of a release are built and cached.
func ExampleCacheDir() {
	os.Setenv("JOBKIT_ENVTEST_CACHE", "/var/cache/envtest")
	defer os.Unsetenv("JOBKIT_ENVTEST_CACHE")
	dir, _ := assets.CacheDir(assets.Versions{Kubernetes: "1.37.2", Etcd: "3.7.0"})
	fmt.Println(filepath.ToSlash(dir))
	// Output:
	// /var/cache/envtest/k8s-1.37.2-etcd-3.7.0
}
