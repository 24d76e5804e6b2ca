// Package deadlines is the Kubernetes face of [plaindl]
// (github.com/jobkit/jobkit/plain/deadlines): it tells when a single-pod job
// should give up on its pod (never scheduled, never getting going on its node,
// running too long), as Prow's plank does, reading the pod's phase,
// metadata.creationTimestamp and status.startTime.
//
// The arithmetic lives in the plain package: the stages, [plaindl.Timeouts] and its
// defaults, the kinds, [plaindl.Result] and [plaindl.Measure], with the invariants
// and the differences from plank. This package converts pods onto it and re-exports
// none of its names: [Check] reads the facts of a pod and calls [plaindl.Check], and
// [ValidateTimeouts] reports the plain package's rejections as Kubernetes field
// errors. A caller without pods uses the plain package directly.
//
// # Invariants
//
// Those of the plain package. Pods are not modified; nothing reads the clock.
//
// # Cost
//
// Check is O(1) and does not allocate unless it returns an error.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
package deadlines
