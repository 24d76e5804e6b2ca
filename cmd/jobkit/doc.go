// Command jobkit is jobkit's command-line tool. Its one subcommand, explain, says
// what a Job controller built on jobkit would do next with a batch/v1 Job, and why:
//
//	jobkit explain -f job.yaml -f pods.yaml
//	jobkit explain NAME -n NAMESPACE [--kubeconfig FILE] [--context NAME]
//
// Run `jobkit explain -h` for every flag.
//
// A custom resource whose controller is built on jobkit is explained with
// --owner-kind GROUP/VERSION/KIND and --owner-finalizer NAME (its tracking
// finalizer). Its object is read by the field names of a batch/v1 Job (spec's
// completions, parallelism, completionMode, backoffLimit, backoffLimitPerIndex,
// maxFailedIndexes, podFailurePolicy, successPolicy, podReplacementPolicy, suspend,
// activeDeadlineSeconds, selector, template and managedBy; a status shaped as a
// Job's): a resource that names them otherwise is explained rightly only through its
// own conversion, from Go with explain.ExplainWorkload. Live, the object is found by
// discovery and read with the dynamic client, and the pods of its namespace are
// listed once and kept by controller reference. --steps runs it on the in-memory
// cluster as an object of its kind: the pods created carry its controller reference
// and finalizer, and the status writes name the kind.
//
// Exit codes: 0 when the explanation was written, 1 when it could not be made (bad
// input, no Job, no access to the cluster), 2 for bad flags.
//
// The command lives in its own module, github.com/jobkit/jobkit/cmd/jobkit, so that
// the core module keeps its small dependency budget while this one uses client-go.
// It builds against the core of the same checkout through a replace directive, which
// `go install ...@latest` does not honour: install it from a clone with
// `cd cmd/jobkit && go install .`.
package main
