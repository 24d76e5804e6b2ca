// Command jobkit-envtest prints the directory of the kube-apiserver and etcd
// binaries that controller-runtime's envtest runs, finding them or building them
// from the Go module proxy when none are found (package assets; about 12 minutes
// the first time on 2 cores). Use it as KUBEBUILDER_ASSETS:
//
//	export KUBEBUILDER_ASSETS=$(go run github.com/jobkit/jobkit/controllerruntime/cmd/jobkit-envtest@latest)
//
// K8S_VERSION, ETCD_VERSION and STAGING_VERSION choose the releases (default
// Kubernetes 1.37.2, etcd 3.7.0); JOBKIT_ENVTEST_CACHE is where they are built
// (default ~/.cache/jobkit/envtest). Progress goes to standard error.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/jobkit/jobkit/controllerruntime/testenv/assets"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: jobkit-envtest (no arguments; see the package doc)")
		code := 2
		if os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "-help" {
			code = 0
		}
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := assets.Dir(ctx, assets.EnvVersions())
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobkit-envtest:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}
