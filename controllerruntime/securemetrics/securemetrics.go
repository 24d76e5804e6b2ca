package securemetrics

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options returns the options of a manager's metrics server that serves /metrics
// at bindAddress over HTTPS, to clients that authenticate with a bearer token the
// API server accepts (a TokenReview) and are authorized to get the non-resource
// URL /metrics (a SubjectAccessReview): controller-runtime's
// filters.WithAuthenticationAndAuthorization, as a kubebuilder scaffold serves
// them. Without a certificate directory (set CertDir on the result),
// controller-runtime serves a self-signed certificate.
func Options(bindAddress string) metricsserver.Options {
	return metricsserver.Options{
		BindAddress:    bindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
	}
}
