// Package crowner is the part of a controller-runtime controller built on jobkit
// that is the same for every owner kind: the Reconcile body, the owner and pod
// event handlers, and the orphan cleanup. examples/controllerruntime (batch/v1
// Jobs) and examples/trainingjob (a custom resource) each give an Owner their
// object type, its conversion onto plan.Workload and their pod listing, and
// register what it returns with their manager.
package crowner
