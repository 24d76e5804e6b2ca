// Package telemetry serves /metrics, /healthz and /readyz (Endpoints) for the
// example binary that has no controller-runtime manager to serve them
// (cmd/jobkit-clientgo). The metrics themselves are the controllerruntime
// module's package metrics, which imports no controller-runtime.
//
// Listen and Serve are for one goroutine each; the probe handlers are safe for
// concurrent requests and cost one call of each check.
package telemetry
