// Package kueuetest runs, for the tests of the Kueue-enabled example
// commands, Kueue's own core controllers and scheduler in the test process
// against an envtest API server (as Kueue's integration tests do), and
// creates the queues a test submits to: a ResourceFlavor, a ClusterQueue and
// a LocalQueue.
package kueuetest
