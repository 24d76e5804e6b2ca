// Package jobkit holds no code: it is the overview of the module. jobkit is the
// reconciliation logic of the Kubernetes batch/v1 Job controller (the behaviour of
// Kubernetes 1.37, written anew) as small packages that an operator, an external Job
// controller (through spec.managedBy) or a scheduler with no Kubernetes objects at all
// can import.
//
// The packages form four layers, each importing only the ones below it; take the
// highest one that fits:
//
//	plain/...         standard library only: index intervals, backoff delays,
//	                  wantActive, removal order, the uncounted-pods ledger, failure and
//	                  success rules, concurrency limits, pod deadlines, group rules,
//	                  over ints, durations, times and small structs of facts
//	owner, indexes,   the Kubernetes layer: Jobs and pods converted onto the plain
//	backoff, ...      layer, API validation as field errors, conditions, patches, the
//	                  tracking finalizer
//	plan              the pure decision of one sync of any owner (a batch/v1 Job is
//	                  one conversion onto it: plan.JobWorkload); the Plan is plain data
//	reconcile         executes a Plan through a small Client in the crash-safe order,
//	                  with expectations, slow-start creation, events and metrics;
//	                  reconcile/reconciletest is an in-memory cluster for tests
//
// Beside them: groups (roles under one owner, or as child Jobs, as JobSet runs them)
// and singlepod (one pod per run, as plank runs them). Nested modules hold what needs
// client-go or controller-runtime: github.com/jobkit/jobkit/controllerruntime (one
// Setup call runs a controller of any owner type), cmd/jobkit (the explain CLI) and
// examples.
//
// The core module imports only the standard library, k8s.io/api, k8s.io/apimachinery,
// k8s.io/utils and github.com/go-logr/logr. Each package's own doc says what it does,
// its invariants, its costs and whether it is safe for concurrent use; the README
// starts from a quick start and says which package each kind of user wants, and the
// repository's docs/ directory holds a guide per kind of user.
package jobkit
