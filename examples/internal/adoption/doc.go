// Package adoption finds the owners that may adopt an orphan pod, for the example
// controllers of batch/v1 Jobs (examples/clientgo and examples/controllerruntime):
// a pod without a controller is offered to the Jobs whose selector matches it, and
// the sync of such a Job adopts it (reconcile.PodEventResult.Adoptable says when).
package adoption
