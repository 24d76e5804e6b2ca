package kueue

import "sigs.k8s.io/controller-runtime/pkg/client"

// CanDefaultManagedBy is j.CanDefaultManagedBy for jobkit's controller named
// controller (Options.ControllerName), for the external tests.
func CanDefaultManagedBy[T client.Object](j *Job[T], controller string) bool {
	j.controller = controller
	return j.CanDefaultManagedBy()
}
