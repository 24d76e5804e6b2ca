// Package controllertest runs JobSet's own integration suite of its
// controller (test/integration/controller of the module sigs.k8s.io/jobset)
// against jobkit's JobSet controller: hack/jobset-suite.sh (make
// jobset-suite) lays JobSet's spec file from the module cache over this
// directory with go test -overlay (the repository holds no copy of it) and
// builds it with the tag jobsetsuite, which adds suite_test.go: the suite's
// start, where JobSet's starts its reconciler, starts upstream.Setup's
// controller on envtest with JobSet's CRD from the module cache. The package
// shares the spec file's name.
//
// Skipped lists the specs left out, each with its reason (a JobSet feature
// this controller does not have, or a JobSet internal the spec inspects);
// Summary prints the outcome of every spec, and the reason of each that
// failed or was skipped. Nothing here is safe for concurrent use: the suite
// runs its specs one after another.
package controllertest
