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
// finalizer). Its object is read by the field names of a batch/v1 Job unless a
// field mapping says where it keeps them: --map JOBFIELD=FIELD (repeatable;
// JOBFIELD==LITERAL for a constant, FIELD|FIELD for alternatives) or --mapping FILE,
// a YAML file of ownerKind, ownerFinalizer and fields (testdata/trainingjob.mapping.yaml
// is examples/trainingjob's). Live, the object is found by discovery and read with
// the dynamic client, and the pods of its namespace are listed once and kept by
// controller reference. --steps runs it on the in-memory cluster as an object of
// its kind. Kinds of the input that are neither the owner's nor pods are named on
// stderr, with the flags that would explain them.
//
// Installed on the PATH as kubectl-jobkit (a copy or a symlink of the binary), the
// command is a kubectl plugin: `kubectl jobkit explain ...` runs it with the same
// arguments, and it behaves the same under either name.
//
// Exit codes: 0 when the explanation was written, 1 when it could not be made (bad
// input, no Job, no access to the cluster), 2 for bad flags.
//
// The command lives in its own module, github.com/jobkit/jobkit/cmd/jobkit, so that
// the core module keeps its small dependency budget while this one uses client-go
// (never controller-runtime, which only its tests use). Package explain is a
// module of its own, github.com/jobkit/jobkit/cmd/jobkit/explain, at the core's
// Kubernetes floor, so that an operator can import it without raising its
// k8s.io/api.
// It builds against the core of the same checkout through a replace directive, which
// `go install ...@latest` does not honour: install it from a clone with
// `cd cmd/jobkit && go install .`.
package main
