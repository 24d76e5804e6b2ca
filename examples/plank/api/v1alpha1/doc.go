// Package v1alpha1 is the RunJob API of the plank example (group
// examples.jobkit.dev, version v1alpha1): a job that runs exactly one pod, as a
// CI run or a build does, under concurrency limits and pod timeouts.
//
// controller-gen generates, from the types and their kubebuilder markers, the
// DeepCopy methods (zz_generated.deepcopy.go) and the CustomResourceDefinition in
// config/crd: run hack/generate.sh after changing a type; hack/generate.sh --check
// (part of the test command) fails when either is stale. The package depends only
// on k8s.io/api and k8s.io/apimachinery.
//
// +kubebuilder:object:generate=true
// +groupName=examples.jobkit.dev
package v1alpha1
