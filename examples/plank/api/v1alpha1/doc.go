// Package v1alpha1 is the RunJob API of the plank example (group
// examples.jobkit.dev, version v1alpha1): a job that runs exactly one pod, as a
// CI run or a build does, under concurrency limits and pod timeouts.
//
// The types are written by hand, DeepCopy methods included, so that the example
// needs no code generator; config/crd holds the matching CustomResourceDefinition.
// The package depends only on k8s.io/api and k8s.io/apimachinery.
package v1alpha1
