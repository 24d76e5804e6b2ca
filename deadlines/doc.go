// Package deadlines is the Kubernetes face of [plaindl]
// (github.com/jobkit/jobkit/plain/deadlines): it tells when a single-pod job
// should give up on its pod (never scheduled, never getting going on its node,
// running too long), as Prow's plank does, reading the pod's phase,
// metadata.creationTimestamp and status.startTime.
//
// [Check] converts the pod with [PodOf] and calls [plaindl.Check];
// [Timeouts.Validate] reports the plain package's rejections as Kubernetes field
// errors. Kind, Result and the constants are aliases of the plain package, where
// the stages, the invariants and the differences from plank are documented; a
// caller without pods uses it directly.
//
// # Invariants
//
// Those of the plain package. Pods are not modified; nothing reads the clock.
//
// # Cost
//
// Check and Measure are O(1) and do not allocate unless they return an error.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
package deadlines
