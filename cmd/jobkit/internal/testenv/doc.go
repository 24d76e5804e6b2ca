// Package testenv starts a real kube-apiserver and etcd for the integration tests of
// jobkit explain, through controller-runtime's envtest. It is a copy of the
// examples' helper (examples/internal cannot be imported from this module). The
// binaries cannot be downloaded in this project's environment; hack/envtest-bins.sh
// builds them from the Go module proxy and caches them outside the repository.
// Start uses $KUBEBUILDER_ASSETS when set and runs that script otherwise.
//
// Start is safe for concurrent use: the binaries are located once per process.
package testenv
