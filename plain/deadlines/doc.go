// Package deadlines tells when a single-pod job should give up on its pod (or a
// task scheduler on one run of a task), over plain times and durations with the
// standard library only: a pod that is never scheduled, never gets going on its
// node, or runs too long, as Prow's plank reconciler does. [Check] reports the one timeout that
// applies to a pod now, whether it expired, the reason to record, and the time
// left, so a controller can requeue exactly when it would expire instead of
// polling.
//
// A [Pod] is the three facts the timeouts read: the phase, the creation time and
// the start time. Package github.com/jobkit/jobkit/singlepod/deadlines reads them from a
// *corev1.Pod (metadata.creationTimestamp, status.startTime) and calls [Check].
// The job-level deadline of a batch/v1 Job (spec.activeDeadlineSeconds) is not
// here: package plan handles it.
//
// # Stages
//
//	stage        Phase     Started   measured from
//	unscheduled  Pending   zero      Created
//	pending      Pending   set       Started
//	running      Running   set       Started
//
// Plank marks the job error (unscheduled, pending) or aborted (running), with
// the reason [Kind.Reason] gives, and deletes the pod; mapping an expired
// timeout to a step is package podoutcome's job (for a scheduler: stop the run). A pod that is
// finished, in phase Unknown, or Running without a start time has no timeout.
//
// # Invariants
//
//   - At most one timeout applies to a pod at a time.
//   - Expired if and only if Elapsed >= Timeout (plank compares with >=).
//   - 0 <= Remaining <= Timeout; Remaining == 0 when Expired or KindNone;
//     otherwise Elapsed + Remaining == Timeout.
//   - Nothing reads the clock; now is an argument. Pods are not modified.
//
// # Cost
//
// Check and Measure are O(1) and do not allocate unless they return an error.
//
// # Concurrency
//
// Every function is pure and safe for concurrent use.
//
// # Differences from plank
//
//   - Time is an argument. Plank measures with the wall clock (time.Since),
//     so its timeouts cannot be tested without waiting.
//   - A zero timeout means no timeout. Plank has no off switch: its
//     configuration defaults a zero value, and a zero duration would expire at
//     once. [DefaultTimeouts] gives plank's values.
//   - Negative timeouts are rejected ([Timeouts.Validate], a [*FieldError]
//     each) instead of
//     expiring at once.
//   - A running pod reports the time left. Plank does not requeue running
//     pods and notices the running timeout only on the next event or resync.
//   - A start time later than now (clock skew between a node and the
//     controller) counts as no time elapsed, so the time left never exceeds
//     the timeout; plank's would.
//   - An empty phase is treated as Pending, its API default; plank ignores
//     pods without a phase.
//   - Per-job overrides of the timeouts (plank's decoration config) are the
//     caller's: pass the Timeouts that apply to the job.
package deadlines
