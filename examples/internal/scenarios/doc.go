// Package scenarios is the integration suite both example controllers (clientgo and
// controllerruntime) run against a real kube-apiserver and etcd (envtest).
//
// Contract for adapters (stable; both adapters depend on it):
//
//	type StartFunc func(ctx context.Context, cfg *rest.Config, managedBy string) (stop func(), err error)
//	func Run(t *testing.T, cfg *rest.Config, start StartFunc)
//	func ReconcileConfig(managedBy string) reconcile.Config
//
// A StartFunc starts one controller (fresh informers or cache, fresh Reconciler state)
// managing the Jobs whose spec.managedBy is managedBy, and returns once it is running
// with its caches synced. It must:
//
//   - build every client from the cfg it is given (not the one given to Run): Run
//     wraps its transport to check that the API server accepts every Job status
//     write;
//   - build its reconcile.Config with ReconcileConfig(managedBy) (short backoff and
//     batch period); it may add Logger, Events and Metrics;
//   - act only on Jobs whose spec.managedBy is managedBy: scenarios run in parallel,
//     each with its own controller and managedBy name, in one API server, so several
//     controllers (started by the same StartFunc) run at once in one process. With
//     controller-runtime this means a metrics bind address of "0", no health probes,
//     and unique controller names or SkipNameValidation;
//   - return a stop that cancels the controller and returns only once it has stopped
//     issuing API calls. Run may then call start again with the same managedBy (the
//     restart scenario: new process state, same cluster).
//
// ctx is cancelled when the scenario that called start ends; Run calls stop too.
//
// # The suite
//
// Each scenario runs as a parallel subtest in its own namespace, with its own
// controller (a managedBy name of its own, "scenarios.jobkit.dev/<scenario>") and a
// test kubelet: envtest runs no scheduler, kubelet, garbage collector or namespace
// controller, so the kubelet binds new pods to a node that does not exist, sets their
// status through the API (Running and Ready; Succeeded; Failed with an exit code;
// evicted with a DisruptionTarget condition) and ends terminating pods as a kubelet
// does (killed with exit code 137, then deleted with grace period 0, so they go once
// their finalizers are gone). Scenarios: NonIndexed and Indexed completion,
// parallelism up and down, suspend and resume, backoffLimit, podFailurePolicy
// (FailJob, Ignore on DisruptionTarget, FailIndex), backoffLimitPerIndex with
// maxFailedIndexes, successPolicy, podReplacementPolicy Failed with a terminating
// pod, activeDeadlineSeconds, elastic Indexed completions, orphan finalizers after a
// Background deletion, a Job recreated under the same name, finished orphans adopted
// and counted by a Job with a manual selector, a relabelled pod released, a
// controller restart in the middle of a Job, and a Job managed by another controller.
// The adoption and release scenarios also count the controller's PATCH requests per
// pod (one adoption and one finalizer removal per adopted pod, one patch per released
// pod, no 409 Conflict).
//
// Every scenario checks the final counters and conditions exactly, that no pod keeps
// the tracking finalizer, and that the API server accepted every Job status write the
// controller sent (Conflict and NotFound aside). The suite takes about 10 seconds
// against a local envtest.
package scenarios
