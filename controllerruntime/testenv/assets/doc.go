// Package assets finds or builds the kube-apiserver and etcd binaries that
// controller-runtime's envtest runs: Find looks where they usually are
// ($KUBEBUILDER_ASSETS, jobkit's cache, setup-envtest's store), Build builds them
// from the Go module proxy where they cannot be downloaded, and Dir does the one,
// then the other. It imports the standard library only, so that the command that
// prints the directory (cmd/jobkit-envtest, which hack/envtest-bins.sh runs)
// builds in seconds.
//
// Dir and Find are safe for concurrent use; Build takes a file lock in the
// directory it builds into, so concurrent processes build once. A cold Build takes
// about 12 minutes on 2 cores (kube-apiserver about 11, etcd about 1).
package assets
