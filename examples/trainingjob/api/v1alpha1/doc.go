// Package v1alpha1 is the TrainingJob API of the trainingjob example (group
// ml.examples.jobkit.dev, version v1alpha1): a run of N indexed workers, such as a
// distributed training run, where each worker (index) is retried on its own with
// a backoff, listed exit codes fail the whole run at once, and the run succeeds
// when enough workers have succeeded.
//
// A run may also have a launcher (spec.launcher): one more pod, started once
// every worker is Ready, whose success completes the run; a role that fails for
// good restarts the whole group, up to spec.maxRestarts times. Such a run's
// status is that of a group (restarts, terminalState, groupConditions) and of
// each role (status.launcher, status.workers: the attempt, the counts over every
// attempt, and the attempt's pods as an AttemptStatus, which converts to and
// from a batchv1.JobStatus); the Job-shaped fields stay unset. Without a
// launcher, a run is exactly what it was before the launcher existed.
//
// The spec is a batch/v1 Job's spec in a training run's words, and the status
// mirrors batchv1.JobStatus field for field (same JSON names and meanings), so that
// a controller can hand both to jobkit's plan as a Job-shaped workload:
// TrainingJob.PodFailurePolicy, TrainingJob.SuccessPolicy, TrainingJobStatus.JobStatus
// and StatusFromJob are those conversions, written once here.
//
// The CustomResourceDefinition (config/crd) is strict enough that the API server
// itself refuses a malformed spec and a status that breaks the rules of a Job's
// status that CEL checks cheaply (a completion time without a Complete
// condition, counters that go backwards, active pods in a finished run, ...);
// examples/trainingjob/README.md lists them. controller-gen generates the CRD
// and the DeepCopy methods (zz_generated.deepcopy.go) from the types and their
// kubebuilder markers: run hack/generate.sh after changing a type;
// hack/generate.sh --check fails when either is stale.
//
// The package depends only on k8s.io/api and k8s.io/apimachinery. Its types are
// plain data with no locking: share them between goroutines as any Kubernetes
// object, read-only or through DeepCopy. The conversions copy and never share
// or change their input; each costs one pass over the status or policy it
// converts (a few dozen fields, plus the lists of conditions, rules, exit codes
// and uncounted UIDs), allocating a copy of each pointer and list.
//
// +kubebuilder:object:generate=true
// +groupName=ml.examples.jobkit.dev
package v1alpha1
