// Package v1alpha1 is the TrainingJob API of the trainingjob example (group
// ml.examples.jobkit.dev, version v1alpha1): a run of N indexed workers, such as a
// distributed training run, where each worker (index) is retried on its own with
// a backoff, listed exit codes fail the whole run at once, and the run succeeds
// when enough workers have succeeded.
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
