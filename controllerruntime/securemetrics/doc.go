// Package securemetrics serves a controller-runtime manager's /metrics (the
// controllerruntime module's metrics among them) with authentication and
// authorization, through controller-runtime's filters:
//
//	manager.Options{Metrics: securemetrics.Options(":8443")}
//
// The controller's service account then needs create on
// tokenreviews.authentication.k8s.io and subjectaccessreviews.authorization.k8s.io,
// and the scraper's get on the non-resource URL /metrics. It is a package of its
// own because the filters import k8s.io/apiserver (and its OpenTelemetry and gRPC
// dependencies): a controller that serves metrics another way does not build them.
//
// Options is a pure function, safe for concurrent use.
package securemetrics
