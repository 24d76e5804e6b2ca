// Package v1alpha2 is the JobSet API of the jobset example (group
// jobset.examples.jobkit.dev, version v1alpha2): a group of child batch/v1 Jobs in
// roles (replicatedJobs: a leader and workers, a launcher and ranks, a driver and
// executors) that start, fail, restart and succeed together.
//
// The field names, JSON names, defaults and the labels and annotations of the
// children are those of JobSet's jobset.x-k8s.io/v1alpha2, so that manifests and tools
// written for JobSet read and write this resource unchanged but for the apiVersion.
// The group is our own, so that the resource can be installed beside a real JobSet.
// What is not carried: spec.volumeClaimPolicies and the elastic scaling of a running
// JobSet (replicatedJobs are immutable). Under restartStrategy InPlaceRestart the
// status carries the in-place restart attempts (the barrier), which the controller
// moves from the attempts the pods' agents report (with the controller's
// InPlaceRestart option); the agent is not part of the example (groups/childjobs
// documents what is missing).
//
// The CustomResourceDefinition (config/crd) carries what the API server can check
// cheaply: enums, bounds, the defaults of JobSet's CRD schema and webhook, the
// immutable fields, and status rules (counters never go backwards, a terminal state
// never changes, restartsCountTowardsMax never exceeds restarts). The rules that need
// the whole spec (dependsOn naming an earlier role, child names of at most 63
// characters, valid RE2 patterns) are childjobs.Input.Validate's, which the controller
// applies before any child exists. controller-gen generates the CRD and the DeepCopy
// methods (zz_generated.deepcopy.go): run hack/generate.sh after changing a type;
// hack/generate.sh --check fails when either is stale.
//
// The package depends only on k8s.io/api and k8s.io/apimachinery. Its types are
// plain data with no locking: share them between goroutines read-only or through
// DeepCopy.
//
// +kubebuilder:object:generate=true
// +groupName=jobset.examples.jobkit.dev
package v1alpha2
