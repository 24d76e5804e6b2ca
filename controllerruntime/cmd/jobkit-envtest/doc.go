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
