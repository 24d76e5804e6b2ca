// Package envtesting is the integration-test scaffolding the examples share: it
// starts one kube-apiserver and etcd (controllerruntime/testenv) with an example's
// CRDs, builds the scheme and the clients the tests use, binds an example's
// ClusterRole to a user its controller runs as, starts a controller-runtime
// manager for a test and stops it with the test, and polls for a state (Poll).
// It also holds the checks the CRD tests make of the API server's answers
// (RequireInvalid) and the names they give objects (ObjectName).
//
// What each example simulates of a cluster (its kubelet, its garbage collector,
// the API writes it counts) stays in the example: those differ in what they
// assert.
//
// It is a test helper, not an API: every function that takes a testing.TB fails
// the test on error, and Main prints to standard error. Start and Main cost the
// seconds an API server takes to start (the first time without binaries, a build
// of about 12 minutes); Poll and ObjectName cost nothing. The functions are safe
// for concurrent use by parallel tests; an Env's Cleanup is not.
package envtesting
