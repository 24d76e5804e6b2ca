// Package explain (module github.com/jobkit/jobkit/cmd/jobkit/explain, which
// requires only the core, k8s.io/api, apimachinery, utils and sigs.k8s.io/yaml at
// the core's floor) says what a Job controller built on jobkit would do next with a
// batch/v1 Job (or an owner of another kind), and why. Explain runs plan.Compute on
// the owner's plan.Workload (plan.JobWorkload of a Job) and its pods and turns the
// Plan into a Report: the pods by class (active,
// ready, terminating, succeeded, failed, uncounted, orphan, duplicate index, stray,
// released, ignored, finalizer-left), each decision with its reason, the status
// change field by field, when the controller
// would look again (with the per-index backoff of every waiting index), where it
// stands against each limit with the numbers (Report.Limits), what blocks
// progress when nothing would happen, and diagnostics (tracking finalizers no sync
// will remove, a status the API server refuses, counters that disagree with the
// pods, invalid failure and success policies, bad index annotations).
//
// ReadObjects reads Jobs and pods from the YAML or JSON that `kubectl get -o yaml`
// writes (List objects, several documents; a syntax error names its line in the
// whole input); ParseAssumption reads the what-if pod
// outcomes that Explain applies before planning; Steps plays several syncs on
// reconcile/reconciletest's in-memory cluster.
//
// # Owners of another kind
//
// Explain and Steps take any owner as the plan.Workload its controller builds, with
// Options.Owner naming its kind and tracking finalizer (the zero value is
// owner.BatchJob): a pod is the owner's by a controller reference of that kind
// with the owner's UID, counted through that finalizer; pods of other kinds are
// ignored, and messages name the kind ("the TrainingJob has finished"). The report
// names the kind in JobInfo (empty for a batch/v1 Job, whose output is unchanged).
// The spec and status are checked by the API's rules for a Job's, since plan
// applies them to every owner.
//
// A resource whose fields are not named as a Job's is converted by its caller's own
// function, or by WorkloadOf and a Mapping that says where the object keeps each Job
// field (spec.completions from spec.workers, a literal, alternatives, the owner's
// own backoff; ParseMappingFile reads one from YAML); a nil Mapping reads a Job's
// field names (unknown fields ignored, a field of the wrong type an error naming it
// and the field it was read from), and Objects.Owner makes ReadObjects keep the
// objects of one kind; the kinds it ignores are named by Objects.IgnoredKinds. For
// such an owner, the in-memory cluster of Steps holds it as a reconciletest.Task of
// its kind (its spec in Job terms, its
// status, a new UID that its pods' controller references follow), a Reconciler of
// that kind syncs it, and the pods it creates carry the kind's controller
// reference and finalizer. The steps read as a Job's, with the status writes
// naming the kind ("UpdateStatus TrainingJob NAME"); the same spec, status and pods
// make the same calls as a batch/v1 Job.
//
// # What the plan does not tell, and this package computes
//
// plan.Plan exposes decisions, not the classification behind them, so Explain
// classifies the pods again with the same exported rules (indexes.Strays,
// owner.Kind.HasFinalizer, the pod phase and deletionTimestamp); the per-index backoff of
// each waiting index (the Plan keeps only the earliest requeue) is computed with
// backoff.IndexRemaining from the last failed pod of each index. Both follow plan's
// documented behaviour; a difference would be a bug here, not in plan.
//
// # Invariants, cost, concurrency
//
// Explain and Steps do not modify the owner or the pods (assumptions
// apply to copies) and read no clock: Options.Now is the time of the planned sync,
// so the same input gives the same Report. They cost O(n log n) in pods, like
// plan.Compute, plus a JSON round trip of the status for the field diff;
// WorkloadOf costs a JSON round trip of the object's spec and status; Steps costs
// what its syncs cost on a new in-memory cluster of their own
// (a deep copy per write, O(n log n) per sync). All functions are safe for
// concurrent use; a Report is plain data.
package explain
