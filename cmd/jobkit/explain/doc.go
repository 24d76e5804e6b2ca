// Package explain says what a Job controller built on jobkit would do next with a
// batch/v1 Job, and why. Explain runs plan.Compute on the Job and its pods and turns
// the Plan into a Report: the pods by class (active, ready, terminating, succeeded,
// failed, uncounted, orphan, duplicate index, stray, released, ignored), each
// decision with its reason, the status change field by field, when the controller
// would look again (with the per-index backoff of every waiting index), what blocks
// progress when nothing would happen, and diagnostics (tracking finalizers no sync
// will remove, a status the API server refuses, counters that disagree with the
// pods, invalid failure and success policies, bad index annotations).
//
// ReadObjects reads Jobs and pods from the YAML or JSON that `kubectl get -o yaml`
// writes (List objects, several documents); ParseAssumption reads the what-if pod
// outcomes that Explain applies before planning; Steps plays several syncs on
// reconcile/reconciletest's in-memory cluster.
//
// # What the plan does not tell, and this package computes
//
// plan.Plan exposes decisions, not the classification behind them, so Explain
// classifies the pods again with the same exported rules (indexes.Strays,
// finalizers.Has, the pod phase and deletionTimestamp); the per-index backoff of
// each waiting index (the Plan keeps only the earliest requeue) is computed with
// backoff.IndexRemaining from the last failed pod of each index. Both follow plan's
// documented behaviour; a difference would be a bug here, not in plan.
//
// # Invariants, cost, concurrency
//
// Explain does not modify the Job or the pods (assumptions apply to copies) and
// reads no clock: Options.Now is the time of the planned sync, so the same input
// gives the same Report. It costs O(n log n) in pods, like plan.Compute, plus a
// JSON round trip of the Job status for the field diff. All functions are safe for
// concurrent use; a Report is plain data.
package explain
